import Foundation
import IntercomCall
import IntercomCore
import Testing
import TestSupport

/// Tests that run real `intercom` processes in real time and judge what a listener hears
/// (sound cards, echo, delay, levels, pages and targets), one at a time.
@Suite(.serialized) enum EndToEndTests {}

/// Tests that run real `intercom` processes in real time and judge what crosses the network
/// and how a daemon lives (pairing, discovery, forged and hostile packets, signals, its status
/// socket), one at a time, beside `EndToEndTests`:
/// two lanes, each a call at a time, fit the two cores the suite runs on and the load the
/// calls' margins are set for (one busy core), and nearly halve the time these tests take.
@Suite(.serialized) enum NetworkEndToEndTests {}

/// What two-process call tests share: reading outputs and stats, and judging them.
enum CallFixtures {
    static func readWAV(_ path: String) throws -> WAVCodec.Audio {
        try WAVCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// The figures a peer wrote with `--stats-json`.
    static func readStats(_ path: String) throws -> CallStatistics {
        try CallStatistics(json: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Where the input shows up in the output, window by window (the jitter buffer may change
    /// the delay during a call), and the mouth-to-ear delay that implies.
    struct Alignment {
        let windows: [SignalAlignment.WindowMatch]
        /// Median over the windows.
        let lag: Int
        let correlation: Double
        /// The share of windows that match well.
        let wellMatched: Double
        let delayMilliseconds: Double
        let smallestDelayMilliseconds: Double
        let largestDelayMilliseconds: Double
    }

    static func align(input: [Float], output: [Float], senderStats: CallStatistics, receiverStats: CallStatistics) -> Alignment {
        let inputStart = Double(senderStats.inputStartNs)
        let outputStart = Double(receiverStats.outputStartNs)
        // Where the input begins in the output, by the two processes' wall clocks (the listener
        // may have been running for seconds before the speaker started); the delay comes on top.
        let started = max(0, Int((inputStart - outputStart) * 48_000 / 1e9))
        let (lags, correlations) = windowsOf(input: input, output: output, searchingFrom: started, seconds: 1)
        func delay(_ lag: Int) -> Double { (outputStart + Double(lag) * 1e9 / 48_000 - inputStart) / 1e6 }
        let lag = lags.windows.isEmpty ? 0 : lags.sorted[lags.sorted.count / 2]
        return Alignment(
            windows: lags.windows, lag: lag, correlation: correlations.median, wellMatched: correlations.wellMatched,
            delayMilliseconds: delay(lag), smallestDelayMilliseconds: delay(lags.sorted.first ?? 0),
            largestDelayMilliseconds: delay(lags.sorted.last ?? 0)
        )
    }

    /// Window-by-window alignment, the input searched for `seconds` of the output from
    /// `searchingFrom` on (a receiver that writes no stats is searched over its first 4 s).
    static func windowsOf(input: [Float], output: [Float], searchingFrom start: Int = 0, seconds: Int = 4) -> (
        lags: (windows: [SignalAlignment.WindowMatch], sorted: [Int]), correlations: (median: Double, wellMatched: Double)
    ) {
        let rough = SignalAlignment.bestLag(of: input, in: output, lags: start...(start + seconds * 48_000), window: 3 * 48_000)
        let windows = SignalAlignment.windowedMatches(of: input, in: output, around: rough.lag, search: 4_800)
        let correlations = windows.map(\.correlation).sorted()
        let median = correlations.isEmpty ? 0 : correlations[correlations.count / 2]
        let wellMatched = correlations.isEmpty ? 0 : Double(correlations.filter { $0 > 0.6 }.count) / Double(correlations.count)
        return ((windows, windows.map(\.lag).sorted()), (median, wellMatched))
    }

    /// The 10 ms blocks where the input speaks, in order: when each begins in the input
    /// (seconds), and whether the aligned output was heard there (not below a tenth of it).
    static func spokenBlocks(input: [Float], output: [Float], alignment: Alignment) -> [(time: Double, heard: Bool)] {
        let block = 480
        let threshold = 0.02
        var blocks: [(time: Double, heard: Bool)] = []
        for start in stride(from: 0, to: input.count - block, by: block) {
            let window = alignment.windows.last { $0.inputStart <= start }
            let lag = window.map { start - $0.inputStart < 24_000 ? $0.lag : alignment.lag } ?? alignment.lag
            guard start + lag >= 0, start + lag + block <= output.count else { continue }
            let inputLevel = SignalMeasures.rms(input[start..<(start + block)])
            guard inputLevel > threshold else { continue }
            let heard = SignalMeasures.rms(output[(start + lag)..<(start + lag + block)]) >= inputLevel * 0.1
            blocks.append((Double(start) / 48_000, heard))
        }
        return blocks
    }

    /// 10 ms blocks where the input speaks but the aligned output is silent: audible gaps,
    /// and where in the input they are (seconds).
    static func silentBlocks(input: [Float], output: [Float], alignment: Alignment) -> (gaps: Int, spoken: Int, at: [Double]) {
        let blocks = spokenBlocks(input: input, output: output, alignment: alignment)
        let gaps = blocks.filter { !$0.heard }.map(\.time)
        return (gaps.count, blocks.count, gaps)
    }

    /// The longest stretch of the input's speech that came out silent, counted from the first
    /// spoken 10 ms block that came out heard (the call's start is not a gap): from the first
    /// silent spoken block of a stretch to its last, with no heard spoken block between (pauses
    /// in the speech inside a stretch count too, as a listener would hear them).
    static func longestGap(input: [Float], output: [Float], alignment: Alignment) -> (seconds: Double, at: Double, silentBlocks: Int) {
        var heardOnce = false
        var stretchStart: Double?
        var longest = (seconds: 0.0, at: 0.0, silentBlocks: 0)
        for block in spokenBlocks(input: input, output: output, alignment: alignment) {
            if block.heard {
                heardOnce = true
                stretchStart = nil
                continue
            }
            guard heardOnce else { continue }
            longest.silentBlocks += 1
            let first = stretchStart ?? block.time
            stretchStart = first
            let length = block.time + 0.01 - first
            if length > longest.seconds { (longest.seconds, longest.at) = (length, first) }
        }
        return longest
    }

    /// Runs `processes` to completion, expecting each to exit 0.
    static func expectClean(_ processes: [(String, ChildProcess)], within seconds: Double) {
        for (name, process) in processes {
            let status = process.wait(seconds: seconds)
            #expect(status == 0, "\(name) exited with \(String(describing: status)): \(process.standardError)")
        }
    }

    /// `expectClean` for async tests, waiting off the runner's threads.
    static func expectClean(_ processes: [(String, ChildProcess)], within seconds: Double) async throws {
        for (name, process) in processes {
            let status = try await process.finished(within: seconds)
            #expect(status == 0, "\(name) exited with \(String(describing: status)): \(process.standardError)")
        }
    }

    /// What one two-process call left: A's input, B's output, both peers' statistics.
    struct TwoPeerRun {
        let input: [Float]
        let heard: [Float]
        let speaker: CallStatistics
        let listener: CallStatistics
    }

    /// `twoPeerCall` with A's packets through a `RecordingForwarder` (returned, stopped, with
    /// what it recorded); `whenUnderWay` runs once `packets` sealed packets have gone toward B,
    /// so that the call is known to be under way however long A took to start.
    static func twoPeerCallThroughForwarder(
        speaker speakerArguments: [String], listener listenerArguments: [String], text: String = SpeechFixture.sentence,
        samples: [Float]? = nil, underWayAfter packets: Int, whenUnderWay: (RecordingForwarder) -> Void
    ) throws -> (run: TwoPeerRun, forwarder: RecordingForwarder) {
        let listenerPort = freeUDPPort()
        let forwarder = RecordingForwarder(toB: listenerPort)
        defer { forwarder.stop() }
        let run = try withoutActuallyEscaping(whenUnderWay) { whenUnderWay in
            try twoPeerCall(
                speaker: speakerArguments, listener: listenerArguments, text: text, samples: samples, listenerPort: listenerPort,
                speakerTarget: forwarder.port
            ) { _ in
                #expect(forwarder.waitForSealedPacketsTowardB(packets), "the call did not start")
                whenUnderWay(forwarder)
            }
        }
        return (run, forwarder)
    }

    /// One call over loopback, A speaking `text` (or playing `samples`, 48 kHz mono) to B (or
    /// to `speakerTarget`, a man in the middle), each with its own extra arguments; `during`
    /// runs while they talk.
    static func twoPeerCall(
        speaker speakerArguments: [String], listener listenerArguments: [String], text: String = SpeechFixture.sentence,
        samples: [Float]? = nil, listenerPort: Int = freeUDPPort(), speakerTarget: Int? = nil,
        listenerExtraSeconds: Double = 0.5, during: ((Double) -> Void)? = nil
    ) throws -> TwoPeerRun {
        let speechFile: URL
        let input: [Float]
        if let samples {
            speechFile = URL(fileURLWithPath: temporaryPath("two-peer-in.wav"))
            try Data(WAVCodec.encode(.init(sampleRate: 48_000, channels: 1, samples: samples))).write(to: speechFile)
            input = samples
        } else {
            speechFile = try SpeechFixture.wavFile(text)
            input = try SpeechFixture.speech(text)
        }
        let output = temporaryPath("two-peer-out.wav")
        let (statsA, statsB) = (temporaryPath("a.json"), temporaryPath("b.json"))
        let seconds = speakerSeconds(input)
        // The listener runs until the speaker is done and `listenerExtraSeconds` more, then is
        // stopped (SIGTERM leaves cleanly): a speaker that starts late on a busy machine is
        // still heard to its end.
        let listener = try ChildProcess.intercom(listenerArguments + [
            "--port", "\(listenerPort)", "--no-discovery", "--output-file", output,
            "--duration", "\(seconds + listenerExtraSeconds + 60)", "--stats-json", statsB,
        ])
        #expect(waitForUDPListener(port: listenerPort), "the listener did not start")
        let speaker = try ChildProcess.intercom(speakerArguments + [
            "--port", "\(freeUDPPort())", "--no-discovery", "--peer", "127.0.0.1:\(speakerTarget ?? listenerPort)",
            "--input-file", speechFile.path, "--duration", "\(seconds)", "--stats-json", statsA, "--name", "ana-secret-name",
        ])
        during?(seconds)
        expectClean([("speaker", speaker)], within: seconds + 20)
        usleep(UInt32(listenerExtraSeconds * 1e6))
        listener.signal(SIGTERM)
        expectClean([("listener", listener)], within: 10)
        return TwoPeerRun(
            input: input, heard: try readWAV(output).samples, speaker: try readStats(statsA), listener: try readStats(statsB)
        )
    }

    /// How long a two-peer call's speaker runs for `input`: the speech, and time to settle.
    static func speakerSeconds(_ input: [Float]) -> Double { Double(input.count) / 48_000 + 1.5 }

    /// The median window correlation of B's output with A's input.
    static func correlation(_ run: TwoPeerRun) -> Double {
        align(input: run.input, output: run.heard, senderStats: run.speaker, receiverStats: run.listener).correlation
    }
}
