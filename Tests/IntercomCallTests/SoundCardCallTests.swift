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
        static func peer(
            _ name: String, in lab: AudioLab, port: Int, peers: [Int], seconds: Double, stats: String, extra: [String] = []
        ) throws -> ChildProcess {
            try ChildProcess(ChildProcess.intercomPath, [
                "--capture", lab.alsaName("mic_\(name)"), "--playback", lab.alsaName("spk_\(name)"),
                "--port", "\(port)", "--no-discovery", "--mode", "open", "--name", name,
                "--duration", "\(seconds)", "--stats-json", stats,
            ] + peers.flatMap { ["--peer", "127.0.0.1:\($0)"] } + extra, environment: lab.environment)
        }

        /// How well `input` is found again in a recording that starts silent: the median
        /// waveform correlation of its half-second windows, the phase-insensitive envelope
        /// correlation of those windows (each at its own delay), the share of windows that match
        /// well, and how far the delay moved over the call, in milliseconds.
        struct Match {
            let waveform: Double
            let envelope: Double
            let wellMatched: Double
            let spreadMilliseconds: Double
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
            return Match(
                waveform: correlations.median, envelope: SignalMeasures.envelopeCorrelation(said[...], heard[...]),
                wellMatched: correlations.wellMatched,
                spreadMilliseconds: Double((lags.sorted.last ?? 0) - (lags.sorted.first ?? 0)) / 48
            )
        }

        @Test func speechIntoOneMicrophoneComesOutOfTheOtherPeersSpeaker() async throws {
            let lab = try await startLabOffTheRunner(["mic_a", "spk_a", "mic_b", "spk_b"])
            defer { lab.stop() }
            let speechFile = try SpeechFixture.wavFile(SpeechFixture.sentence)
            let input = try SpeechFixture.speech(SpeechFixture.sentence)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let (statsA, statsB) = (temporaryPath("a.json"), temporaryPath("b.json"))
            let seconds = Double(input.count) / 48_000 + 4

            let b = try Self.peer("b", in: lab, port: portB, peers: [], seconds: seconds, stats: statsB)
            let a = try Self.peer("a", in: lab, port: portA, peers: [portB], seconds: seconds, stats: statsA)
            let recordingPath = temporaryPath("spk_b.raw")
            let recorder = try lab.record("spk_b", to: recordingPath)
            try await Task.sleep(for: .seconds(1.5))
            let talker = try lab.inject(speechFile, into: "mic_a")
            #expect(talker.wait(seconds: 20) == 0, "paplay: \(talker.standardError)")
            CallFixtures.expectClean([("a", a), ("b", b)], within: seconds + 10)
            let heard = try lab.finishRecording(recorder, path: recordingPath)

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
            #expect(CallFixtures.int(receiver, "lost") == 0)
            #expect(CallFixtures.int(sender, "sent_packets") > 300)
            #expect(SignalMeasures.rms(heard) > 0.01, "B's speaker stayed silent")
        }
    }
}

/// Starts an audio lab without holding one of the test runner's few threads while it waits
/// for PulseAudio.
func startLabOffTheRunner(_ devices: [String]) async throws -> AudioLab {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try AudioLab.start(devices: devices) }) }.start()
    }
}
