import ArgumentParser
import FoundationEssentials
import IntercomCall
import IntercomCore
import IntercomIO

/// `intercom bench-dsp`: the microphone's chain on recordings, faster than real time.
struct BenchDSP: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-dsp",
        abstract: "Run the microphone's chain on a recording, faster than real time, and say what each stage costs.",
        discussion: """
            Runs what a live microphone goes through in a call (the echo reference placed by time and by the signals, the \
            echo canceller against --far-end-file, denoise, gain control, the voice detector and VOX gate, both encoders) \
            over --input-file, then what a peer does with the frames sent (sealing, opening, the jitter buffer and mixer, \
            the decoder, the drift resampler), with no sound card and no network, and prints the CPU time of each stage \
            per second of audio: a full-duplex peer talking all the time. The recording and the far end start at the same instant, as a sound card's capture and playback do. \
            --output-file gets the cleaned microphone, --vad-file one line per 10 ms: 1 where VOX would transmit, else 0.
            """
    )

    @OptionGroup(title: "Audio") var audio: AudioOptions

    @Option(name: .customLong("far-end-file"), help: ArgumentHelp("What the speaker played meanwhile (WAV), the echo canceller's reference.", valueName: "F"))
    var farEndFile: String?

    @Option(name: .customLong("vad-file"), help: ArgumentHelp("Write VOX's decision per 10 ms here, 1 or 0 a line.", valueName: "F"))
    var vadFile: String?

    /// The VOX threshold is the one setting of these that applies.
    @OptionGroup(title: "Talk") var talk: TalkOptions

    func validate() throws {
        guard audio.inputFile != nil else { throw ValidationError("--input-file is required: the recording to run the chain on") }
    }

    func run() throws {
        var configuration = CallConfiguration()
        try audio.apply(to: &configuration)
        try talk.apply(to: &configuration, interactive: false, fileInput: false, headless: true)
        let microphone: [Int16]
        let farEnd: [Int16]
        let report: MicrophoneChainRun.Report
        do {
            microphone = try WAVRecording.read(path: audio.inputFile ?? "")
            farEnd = try farEndFile.map { path throws(AudioEndpointError) in try WAVRecording.read(path: path) } ?? []
        } catch {
            throw Failure(.badInput, error)
        }
        let chain = MicrophoneChainRun(configuration: configuration)
        do {
            report = try chain.run(microphone: microphone, farEnd: farEnd)
        } catch {
            throw Failure(.software, error)
        }
        // Played as a live call's peer would: its periods, its jitter buffer's settings.
        let received = ReceiveChainRun(configuration: chain.configuration).run(frames: report.sentFrames, frameSamples: report.sentFrameSamples)
        do {
            if let output = audio.outputFile {
                let cleaned = WAVCodec.Audio(sampleRate: VoiceFormat.sampleRate, channels: 1, samples: report.cleaned.map(float(fromInt16:)))
                try PrivateFile.writeOutput(output, WAVCodec.encode(cleaned))
            }
            if let vadFile {
                try PrivateFile.writeOutput(vadFile, Array(report.transmits.map { $0 ? "1\n" : "0\n" }.joined().utf8))
            }
        } catch {
            throw Failure(.cannotCreate, error)
        }
        print("audio            \(report.audioSeconds.fixed(1)) s, echo cancelling \(configuration.echoCancellation ? (configuration.echoCancelsDistortion ? "on, with the speaker's distortion" : "on") : "off"), denoise \(configuration.preprocessor.denoise ? "on" : "off"), gain control \(configuration.preprocessor.automaticGainControl ? "on" : "off")")
        var total = 0.0
        for (side, stages) in [("microphone to packet", report.stageSeconds), ("packet to speaker", received.stageSeconds)] {
            print("\(side):")
            for (stage, seconds) in stages {
                total += seconds
                print("  \(Self.column(stage, width: 32)) \((seconds / report.audioSeconds * 1000).fixed(2)) ms of CPU per s of audio")
            }
        }
        print("\(Self.column("all stages")) \((total / report.audioSeconds * 1000).fixed(2)) ms of CPU per s of audio (\((report.audioSeconds / max(total, 1e-9)).fixed(0)) x real time)")
        if configuration.echoCancellation {
            let delay = report.echoDelayMilliseconds.map { "\($0.fixed(1)) ms behind its reference" } ?? "not found"
            print("echo             \(delay); \(report.echoReferenceResyncs) re-syncs (\(report.echoReferenceResyncsRefused) refused), \(report.echoDelayCorrections) moves followed, \(report.echoMovesRefused) refused")
        }
        let transmitted = Double(report.transmits.filter { $0 }.count) / 100
        print("VOX              would transmit \(transmitted.fixed(1)) s of \(report.audioSeconds.fixed(1)) s")
    }

    private static func column(_ text: String, width: Int = 34) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
}
