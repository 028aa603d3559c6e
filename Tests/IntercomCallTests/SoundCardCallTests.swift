import Foundation
import IntercomCore
import Testing
import TestSupport

extension EndToEndTests {
    /// Two real `intercom` processes, each with its own microphone and speaker in the audio
    /// lab (PulseAudio null sinks paced in real time, reached through ALSA), as two laptops.
    @Suite(.enabled(if: AudioLab.isAvailable, Comment(rawValue: AudioLab.unavailableReason)))
    struct SoundCardCallTests {
        /// One peer of a lab call, on the lab's devices `mic_X` and `spk_X`.
        /// A peer on the lab's devices, left running until `leave` (its duration only a cap):
        /// a call that ended at a fixed time from its own start would end early on a loaded
        /// machine, where starting both peers takes seconds of the test's schedule.
        static func peer(
            _ name: String, in lab: AudioLab, port: Int, peers: [Int], stats: String, extra: [String] = []
        ) throws -> ChildProcess {
            try ChildProcess(ChildProcess.intercomPath, [
                "--capture", lab.alsaName("mic_\(name)"), "--playback", lab.alsaName("spk_\(name)"),
                "--port", "\(port)", "--no-discovery", "--mode", "open", "--name", name,
                "--duration", "600", "--stats-json", stats,
            ] + peers.flatMap { ["--peer", "127.0.0.1:\($0)"] } + extra, environment: lab.environment)
        }

        /// Ends a call the test has heard enough of: a moment for the last words to come out
        /// of the speaker, then SIGTERM, which leaves cleanly (statistics written, exit 0).
        static func leave(_ peers: [(String, ChildProcess)]) async throws {
            try await Task.sleep(for: .seconds(2))
            for (_, process) in peers { process.signal(SIGTERM) }
            try await CallFixtures.expectClean(peers, within: 30)
        }

        /// Waits until both peers listen (a loaded machine may take seconds to start them), and
        /// a moment more for their session to come up.
        static func waitForPeers(_ ports: Int...) async throws {
            try #require(try await waitForUDPListeners(ports: ports))
            try await Task.sleep(for: .seconds(1))
        }

        /// How well `input` is found again in a recording that starts silent: the median
        /// waveform correlation of its half-second windows, the phase-insensitive envelope
        /// correlation of those windows (each at its own delay), the share of windows that match
        /// well, and how far the delay moved over the call, in milliseconds; and the envelope
        /// correlation where the recording is heard at all, beside the share of the input's
        /// speech it drops out of (`SignalMeasures.envelopeCorrelationAndDropouts`).
        struct Match {
            let waveform: Double
            let envelope: Double
            let wellMatched: Double
            let spreadMilliseconds: Double
            let heardEnvelope: Double
            let dropouts: Double
        }

        static func match(_ input: [Float], in recording: [Float]) -> Match {
            let firstSound = stride(from: 0, to: max(0, recording.count - 480), by: 480).first {
                SignalMeasures.rms(recording[$0..<($0 + 480)]) > 0.005
            } ?? 0
            let output = Array(recording[max(0, firstSound - 24_000)...])
            let (lags, correlations) = CallFixtures.windowsOf(input: input, output: output)
            var heard: [Float] = []
            var said: [Float] = []
            for window in lags.windows where window.inputStart + window.lag + 24_000 <= output.count {
                said += input[window.inputStart..<(window.inputStart + 24_000)]
                heard += output[(window.inputStart + window.lag)..<(window.inputStart + window.lag + 24_000)]
            }
            let (heardEnvelope, dropouts) = SignalMeasures.envelopeCorrelationAndDropouts(said[...], heard[...])
            return Match(
                waveform: correlations.median, envelope: SignalMeasures.envelopeCorrelation(said[...], heard[...]),
                wellMatched: correlations.wellMatched,
                spreadMilliseconds: Double((lags.sorted.last ?? 0) - (lags.sorted.first ?? 0)) / 48,
                heardEnvelope: heardEnvelope, dropouts: dropouts
            )
        }

        @Test func speechIntoOneMicrophoneComesOutOfTheOtherPeersSpeaker() async throws {
            let lab = try await AudioLab.start(devices: ["mic_a", "spk_a", "mic_b", "spk_b"])
            defer { lab.stop() }
            let speechFile = try SpeechFixture.wavFile(SpeechFixture.sentence)
            let input = try SpeechFixture.speech(SpeechFixture.sentence)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let (statsA, statsB) = (temporaryPath("a.json"), temporaryPath("b.json"))
            let b = try Self.peer("b", in: lab, port: portB, peers: [], stats: statsB)
            let a = try Self.peer("a", in: lab, port: portA, peers: [portB], stats: statsA)
            try await Self.waitForPeers(portA, portB)
            let recordingPath = temporaryPath("spk_b.raw")
            let recorder = try lab.record("spk_b", to: recordingPath)
            try await Task.sleep(for: .seconds(1.5))
            let talker = try lab.inject(speechFile, into: "mic_a")
            #expect(try await talker.finished(within: 60) == 0, "paplay: \(talker.standardError)")
            try await Self.leave([("a", a), ("b", b)])
            let heard = try await offTheRunner { try lab.finishRecording(recorder, path: recordingPath) }

            let result = Self.match(input, in: heard)
            let sender = try CallFixtures.readStats(statsA)
            let receiver = try CallFixtures.readStats(statsB)
            // The echo canceller's DC filter (a high-pass below about 150 Hz) shifts the phase of
            // low voices, and Opus is not a waveform coder: the waveform matches well, the level
            // envelopes in each band, which is what the listener hears, match closely.
            #expect(result.waveform > 0.7, "median correlation \(result.waveform); a: \(a.standardError) b: \(b.standardError)")
            #expect(result.envelope > 0.9, "envelope correlation \(result.envelope)")
            #expect(result.wellMatched > 0.8, "well matched \(result.wellMatched)")
            print("lab call: waveform \(result.waveform), envelope \(result.envelope), delay spread \(result.spreadMilliseconds) ms")
            #expect(result.spreadMilliseconds < 25, "the delay moved by \(result.spreadMilliseconds) ms during the call")
            #expect(receiver.lost == 0)
            #expect(sender.sentPackets > 300)
            #expect(SignalMeasures.rms(heard) > 0.01, "B's speaker stayed silent")
            // The speaker's queue is a real device's: more than nothing, less than a second.
            let speakerQueue = receiver.speakerQueueMs
            #expect(speakerQueue > 0 && speakerQueue < 1000, "speaker queue \(speakerQueue) ms")
        }

        /// What A hears in a call where B's speaker leaks into B's microphone 50 ms later at
        /// half the level (a delay line on the microphone's clock, `AudioLab.addEchoPath`), while A reads a paragraph: A's own voice coming
        /// back, unless B cancels it. With `nearTalkAt`, B says a sentence that many seconds
        /// into A's paragraph. The recording starts about 1.5 s before A talks; the returned
        /// offsets say, in seconds of the recording, when A and B were made to talk.
        /// With `nearTalkAt`, B's microphone is recorded too (`microphone`): what B's sentence was
        /// before B's call cleaned and sent it. With `room`, B's speaker reaches B's microphone
        /// through that room of the acoustic lab instead (`AudioLab.addAcousticPath`: a
        /// soft-clipping loudspeaker and the room's reverberation).
        static func echoCall(echoCancellation: Bool, nearTalkAt: Double? = nil, room: String? = nil) async throws -> EchoCall {
            let lab = try await AudioLab.start(devices: ["mic_a", "spk_a", "mic_b", "spk_b"])
            defer { lab.stop() }
            let pathReport = temporaryPath("acoustic-path.json")
            var path: Int32?
            if let room {
                path = try lab.addAcousticPath(from: "spk_b", into: "mic_b", room: room, options: ["--report", pathReport])
            } else {
                try lab.addEchoPath(from: "spk_b", into: "mic_b", delayMilliseconds: 50, gain: 0.5)
            }
            let paragraph = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            let sentence = try SpeechFixture.wavFile(SpeechFixture.sentence, voice: .female)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let bStats = temporaryPath("b.json")
            let b = try Self.peer("b", in: lab, port: portB, peers: [], stats: bStats, extra: echoCancellation ? [] : ["--no-aec"])
            let aStats = temporaryPath("a.json")
            let a = try Self.peer("a", in: lab, port: portA, peers: [portB], stats: aStats)
            try await Self.waitForPeers(portA, portB)
            let recordingPath = temporaryPath("spk_a.raw")
            let recorder = try lab.record("spk_a", to: recordingPath)
            let microphonePath = temporaryPath("mic_b.raw")
            let microphoneRecorder = try nearTalkAt.map { _ in try lab.record("mic_b", to: microphonePath) }
            let recording = Date()
            try await Task.sleep(for: .seconds(1.5))
            let talk = Date().timeIntervalSince(recording)
            let talker = try lab.inject(paragraph, into: "mic_a")
            var nearTalker: ChildProcess?
            var nearTalk: Double?
            if let nearTalkAt {
                try await Task.sleep(for: .seconds(nearTalkAt))
                nearTalk = Date().timeIntervalSince(recording)
                nearTalker = try lab.inject(sentence, into: "mic_b")
            }
            #expect(try await talker.finished(within: 60) == 0, "paplay: \(talker.standardError)")
            #expect(try await nearTalker?.finished(within: 30) ?? 0 == 0)
            try await Self.leave([("a", a), ("b", b)])
            let (statsA, statsB) = (try CallFixtures.readStats(aStats), try CallFixtures.readStats(bStats))
            // Each call's threads said what priority they ran at, whichever it was.
            #expect(statsA.realtimeThreads != nil && statsB.realtimeThreads != nil)
            print("lab echo call (cancelling \(echoCancellation)): A received \(statsA.received), concealed \(statsA.concealed), late \(statsA.late), lost \(statsA.lost); A's speaker underruns \(statsA.playbackDevice?.xruns ?? 0); real-time threads: A \(statsA.realtimeThreads.map { "\($0)" } ?? "unknown"), B \(statsB.realtimeThreads.map { "\($0)" } ?? "unknown")")
            print("lab echo call (cancelling \(echoCancellation)): B's reference re-synced \(statsB.echoReferenceResyncs) times (refused \(statsB.echoReferenceResyncsRefused)) and followed the echo \(statsB.echoDelayCorrections) times (echo \(statsB.echoDelayMs.map { "\($0) ms" } ?? "not found") behind it); B's microphone overruns \(statsB.captureDevice?.xruns ?? 0), speaker underruns \(statsB.playbackDevice?.xruns ?? 0); \(statsB.echoMovesRefused) moves refused; moves: \(statsB.echoMoves.map { "\($0.ms) ms at \($0.atSeconds) s by \($0.finder)" })")
            let microphone = try await offTheRunner { try microphoneRecorder.map { try lab.finishRecording($0, path: microphonePath) } }
            let heardByA = try await offTheRunner { try lab.finishRecording(recorder, path: recordingPath) }
            let report = path.flatMap { lab.stopAcousticPath($0, report: pathReport) }
            if let report {
                print("lab echo call (cancelling \(echoCancellation)): the acoustic path fell behind B's speaker by up to \(report.fellBehindMilliseconds) ms (99 % within \(Double(report.behindMicroseconds.p99) / 1_000)); B's microphone's queue at least \(Double(report.queuedMicroseconds.min) / 1_000) ms (empty after \(report.queuedMicroseconds.emptyBlocks) blocks); speaker to microphone through its queues \(Double(report.throughMicroseconds.min) / 1_000)-\(Double(report.throughMicroseconds.max) / 1_000) ms")
            }
            return (heardByA, talk, nearTalk, statsB.echoReferenceResyncs, microphone, report)
        }

        /// A's recording of an `echoCall`, when A and B were made to talk in it, the canceller's
        /// re-syncs, B's microphone, and with a room what its acoustic path said of its run (nil
        /// when it said nothing).
        typealias EchoCall = (recording: [Float], talk: Double, nearTalk: Double?, resyncs: Int, microphone: [Float]?, path: AcousticPathReport?)

        /// An `echoCall`, made again (twice at most) while the lab's acoustic path moved the echo
        /// (`AcousticPathReport.movedTheEcho`: it fell behind B's speaker by more than it had
        /// queued for B's microphone) or said nothing of its run: the lab, not the room, then
        /// moved the echo in the middle of the call, which a call with a steady echo path is not
        /// judged on. A path that moved the echo three times is a failure of its own, named as
        /// the lab's.
        static func steadyEchoCall(echoCancellation: Bool, nearTalkAt: Double? = nil, room: String?) async throws -> EchoCall {
            var call = try await Self.echoCall(echoCancellation: echoCancellation, nearTalkAt: nearTalkAt, room: room)
            guard room != nil else { return call }
            var tries = 1
            while call.path?.movedTheEcho ?? true, tries < 3 {
                print("lab echo call (cancelling \(echoCancellation)): the acoustic path \(call.path == nil ? "said nothing of its run" : "moved the echo"); made again")
                call = try await Self.echoCall(echoCancellation: echoCancellation, nearTalkAt: nearTalkAt, room: room)
                tries += 1
            }
            #expect(call.path?.movedTheEcho == false, "the lab's acoustic path moved the echo (or said nothing) in each of \(tries) calls: the lab could not keep up")
            return call
        }

        /// An echo call with B's canceller and one without, side by side, B saying a sentence 13 s
        /// into A's paragraph in the first: how much less of A's voice comes back with the
        /// canceller (from 6 s, once it has converged, until 12.5 s) and how well B's sentence
        /// reaches A over A's echo.
        static func cancellingAgainstNot(room: String? = nil) async throws -> (reduction: Double, nearEnd: Match) {
            // One after the other: at once, the two calls' four peers and, with a room, two of the
            // lab's acoustic paths (Python processes reading one sink and playing into another)
            // shared the two cores with the busy core a loaded run adds, and the paths fell behind
            // the speakers they read by up to 340 ms (their own reports): an echo path the lab
            // moved, not the one a call with a busy core has.
            let off = try await Self.steadyEchoCall(echoCancellation: false, room: room)
            let on = try await Self.steadyEchoCall(echoCancellation: true, nearTalkAt: 13, room: room)

            // In each recording from when A was made to talk there.
            func recorded(_ call: EchoCall, from start: Double, to end: Double) -> ArraySlice<Float> {
                call.recording[(Int((call.talk + start) * 48_000)..<Int((call.talk + end) * 48_000)).clamped(to: 0..<call.recording.count)]
            }
            func converged(_ call: EchoCall) -> ArraySlice<Float> {
                recorded(call, from: 6, to: min(12.5, (call.nearTalk ?? .infinity) - call.talk))
            }
            let echoWith = SignalMeasures.energy(converged(on))
            let echoWithout = SignalMeasures.energy(converged(off))
            let reduction = SignalMeasures.decibels(echoWithout, over: echoWith)
            // Second by second, from 6 s into the paragraph: where a bad moment was.
            let seconds = (6..<12).map { second -> Int in
                let (with, without) = (recorded(on, from: Double(second), to: Double(second + 1)), recorded(off, from: Double(second), to: Double(second + 1)))
                return Int(SignalMeasures.decibels(SignalMeasures.energy(without), over: SignalMeasures.energy(with)).rounded())
            }
            print("lab echo\(room.map { " in the \($0)" } ?? ""): \(reduction) dB less with cancellation (second by second from 6 s: \(seconds) dB; talk \(on.talk) s and \(off.talk) s into the recordings; the canceller's reference re-synced \(on.resyncs) times)")
            #expect(SignalMeasures.rms(converged(off)) > 0.005, "no echo came back at all")

            // B's sentence, said over A's paragraph, still reaches A.
            let near = try SpeechFixture.speech(SpeechFixture.sentence, voice: .female)
            let heard = Array(on.recording[min(on.recording.count, Int(((on.nearTalk ?? 14.5) - 0.5) * 48_000))...])
            let result = Self.match(near, in: heard)
            // The same sentence in B's microphone, under A's echo: what the lab put there.
            let said = on.microphone.map { Self.match(near, in: Array($0[min($0.count, Int(((on.nearTalk ?? 14.5) - 0.5) * 48_000))...])) }
            print("lab double talk\(room.map { " in the \($0)" } ?? ""): waveform \(result.waveform), envelope \(result.envelope) (\(result.heardEnvelope) where heard, dropped out of \(result.dropouts) of it), well matched \(result.wellMatched); in B's microphone: envelope \(said?.envelope ?? .nan), well matched \(said?.wellMatched ?? .nan)")
            return (reduction, result)
        }

        /// B's sentence, said over A's echo, reaches A as it was said: its level envelopes where A
        /// hears it, and its windows' waveforms. A dropout (an underrun's digital silence, as a
        /// machine stalled for a fifth of a second in CI left in A's speaker) is not the
        /// canceller's doing and is judged apart: it may take no more than 8 % of the sentence.
        static func expectThrough(_ nearEnd: Match) {
            #expect(nearEnd.heardEnvelope > 0.8, "near-end speech envelope correlation \(nearEnd.heardEnvelope) where heard")
            #expect(nearEnd.dropouts < 0.08, "the near end's speech dropped out of \(nearEnd.dropouts) of it")
            #expect(nearEnd.wellMatched > 0.6, "well matched \(nearEnd.wellMatched)")
        }

        @Test func echoReturningToTheTalkerIsAtLeast20dBWeakerThanWithoutCancellationAndDoubleTalkGetsThrough() async throws {
            let (reduction, nearEnd) = try await Self.cancellingAgainstNot()
            #expect(reduction >= 20, "echo reduced by \(reduction) dB")
            Self.expectThrough(nearEnd)
        }

        /// The same in an office (the acoustic lab's office-laptop: a laptop's small speaker,
        /// soft-clipping, 40 cm from its microphone in a room ringing for 0.35 s), where the
        /// canceller has the room's reverberation and the speaker's distortion to cancel too:
        /// 39.6-44.5 dB in ten runs of this test with a core busy since the canceller works at
        /// 16 kHz and models 300 ms and the speaker's distortion (44.6-45.8 dB in seventeen runs
        /// before; Docs/reliability.md), 40.8-41.7 dB in three calls of `scripts/room-echo` with
        /// the release build (Docs/benchmarks.md). Calls in which the lab's acoustic path moved
        /// the echo itself are made again (`steadyEchoCall`).
        @Test func inAnOfficeTheEchoIsAtLeast30dBWeakerAndDoubleTalkGetsThrough() async throws {
            let (reduction, nearEnd) = try await Self.cancellingAgainstNot(room: "office-laptop")
            #expect(reduction >= 30, "echo reduced by \(reduction) dB")
            Self.expectThrough(nearEnd)
        }

        @Test func aMissingSpeakerIsNamedAndAPulledOneComesBackWhileTheCallGoesOn() async throws {
            // One lab per device: PulseAudio moves the streams of a vanished sink to another
            // sink of its server, where a sound card's would simply fail.
            async let labA = AudioLab.start(devices: ["mic_a"])
            async let microphoneB = AudioLab.start(devices: ["mic_b"])
            async let speakerB = AudioLab.start(devices: ["spk_b"])
            let labs = try await [labA, microphoneB, speakerB]
            defer { for lab in labs { lab.stop() } }
            let paragraph = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            let missing = "intercom_test_no_such_speaker"
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let (statsA, statsB) = (temporaryPath("a.json"), temporaryPath("b.json"))
            // Both run until the test has seen what it needs, then are stopped (SIGTERM leaves cleanly).
            let seconds = 60.0
            let b = try ChildProcess(ChildProcess.intercomPath, [
                "--capture", labs[1].alsaName("mic_b"), "--playback", labs[2].alsaName("spk_b"), "--port", "\(portB)",
                "--no-discovery", "--mode", "open", "--duration", "\(seconds)", "--stats-json", statsB,
            ], environment: AudioLab.environment(combining: [labs[1], labs[2]]))
            // A's speaker does not exist: A says so once, and its microphone still talks to B.
            let a = try ChildProcess(ChildProcess.intercomPath, [
                "--capture", labs[0].alsaName("mic_a"), "--playback", missing, "--port", "\(portA)", "--no-discovery",
                "--mode", "open", "--duration", "\(seconds)", "--stats-json", statsA, "--peer", "127.0.0.1:\(portB)",
            ], environment: labs[0].environment)
            try await Self.waitForPeers(portA, portB)
            let talker = try labs[0].inject(paragraph, into: "mic_a")
            defer { talker.signal(SIGTERM) }

            // B's speaker is pulled out for three seconds, mid-sentence.
            try await Task.sleep(for: .seconds(2.5))
            try labs[2].unplug("spk_b")
            try await Task.sleep(for: .seconds(3))
            try labs[2].plug("spk_b")
            let recordingPath = temporaryPath("spk_b-after.raw")
            let recorder = try labs[2].record("spk_b", to: recordingPath)
            // B tries its speaker again 0.5, 1 and then every 2 s: once it is back, six seconds of call.
            try await waitUntil(timeout: .seconds(20)) { b.standardError.contains("is back") }
            try await Task.sleep(for: .seconds(6))
            // A first, so that B hears the last of what A sent.
            a.signal(SIGTERM)
            try await CallFixtures.expectClean([("a", a)], within: 15)
            try await Task.sleep(for: .milliseconds(500))
            b.signal(SIGTERM)
            try await CallFixtures.expectClean([("b", b)], within: 15)
            let heard = try await offTheRunner { try labs[2].finishRecording(recorder, path: recordingPath) }

            let aWarnings = a.standardError.split(separator: "\n").filter { $0.contains("warning") && $0.contains(missing) }
            #expect(aWarnings.count == 1, "\(a.standardError)")
            #expect(aWarnings.first?.contains("No such file or directory") == true, "\(aWarnings)")
            let bLines = b.standardError.split(separator: "\n")
            let speaker = "'\(labs[2].alsaName("spk_b"))'"
            #expect(bLines.filter { $0.contains("warning") && $0.contains(speaker) }.count == 1, "\(b.standardError)")
            #expect(bLines.contains { $0.contains(speaker) && $0.contains("is back") }, "\(b.standardError)")
            // The speech came out of B's speaker again once it was back: of the 6 s and more recorded,
            // at least 1.5 s of sound (a pulled sink plays exact zeros; the quiet ends of
            // words sit near 0.005).
            let blocks = SignalMeasures.blockRMS(heard, block: 4_800)
            #expect(blocks.filter { $0 > 0.005 }.count >= 15, "B's speaker stayed silent after it came back: \(blocks)")
            // All along, A's packets reached B.
            let (aStats, bStats) = (try CallFixtures.readStats(statsA), try CallFixtures.readStats(statsB))
            let sent = aStats.sentPackets
            let received = bStats.received
            // Less what A held back while B started and their session came up.
            let beforeSession = aStats.security.unsentNoSession
            #expect(sent > 1_000 && beforeSession >= 0 && received >= sent - beforeSession - 10, "A sent \(sent) (\(beforeSession) before the session), B received \(received)")
            // The statistics say what befell each device.
            let aSpeaker = try #require(aStats.playbackDevice)
            #expect(aSpeaker.name == missing && !aSpeaker.open, "\(aSpeaker)")
            #expect(aSpeaker.faults == 1 && aSpeaker.recoveries == 0, "\(aSpeaker)")
            let aMicrophone = try #require(aStats.captureDevice)
            #expect(aMicrophone.open && aMicrophone.faults == 0, "\(aMicrophone)")
            let bSpeaker = try #require(bStats.playbackDevice)
            #expect(bSpeaker.open, "\(bSpeaker)")
            #expect(bSpeaker.faults >= 1, "\(bSpeaker)")
            #expect(bSpeaker.recoveries == bSpeaker.faults, "\(bSpeaker)")
        }
    }
}
