import ArgumentParser
import IntercomCall
import IntercomCore
import IntercomDSP

/// Where sound comes from and goes to, and how it is coded.
struct AudioOptions: ParsableArguments {
    @Option(name: .customLong("input-file"), help: ArgumentHelp("Read the microphone from this WAV file (any rate, any channels).", valueName: "F.wav"))
    var inputFile: String?

    @Option(name: .customLong("output-file"), help: ArgumentHelp("Write what is heard to this WAV file (48 kHz mono).", valueName: "F.wav"))
    var outputFile: String?

    @Option(help: ArgumentHelp("ALSA device to capture from.", valueName: "DEVICE"))
    var capture = "default"

    @Option(help: ArgumentHelp("ALSA device to play to.", valueName: "DEVICE"))
    var playback = "default"

    @Option(name: .customLong("audio-buffer-ms"), help: "Sound card buffer: more is safer against underruns, less is lower delay.")
    var audioBufferMilliseconds = 40

    @Flag(name: .customLong("no-aec"), help: "Do not cancel the speaker's echo in the microphone.")
    var noEchoCancellation = false

    @Option(name: .customLong("echo-tail-ms"), help: "The longest echo path to cancel, in milliseconds.")
    var echoTailMilliseconds = 150

    @Flag(name: .customLong("no-denoise"), help: "Do not suppress background noise.")
    var noDenoise = false

    @Flag(name: .customLong("no-agc"), help: "Do not adjust the microphone level automatically.")
    var noAutomaticGainControl = false

    @Option(name: .customLong("frame-ms"), help: "Opus frame length: 10 (lower delay) or 20 (fewer packets).")
    var frameMilliseconds: Int = 10

    @Option(help: ArgumentHelp("Opus bitrate in bits per second.", valueName: "BPS"))
    var bitrate: Int = 32_000

    @Flag(name: .customLong("no-fec"), help: "Send no in-band forward error correction.")
    var noFEC = false

    @Flag(help: "Discontinuous transmission: send almost nothing in silence.")
    var dtx = false

    /// Applies the audio choices to a call's configuration.
    func apply(to configuration: inout CallConfiguration) throws {
        configuration.encoder = try encoderConfiguration()
        configuration.liveInput = inputFile == nil
        configuration.echoCancellation = !noEchoCancellation
        guard (10...2000).contains(echoTailMilliseconds) else {
            throw ValidationError("--echo-tail-ms \(echoTailMilliseconds) is outside 10...2000")
        }
        guard (10...1000).contains(audioBufferMilliseconds) else {
            throw ValidationError("--audio-buffer-ms \(audioBufferMilliseconds) is outside 10...1000")
        }
        configuration.echoTailMilliseconds = echoTailMilliseconds
        configuration.preprocessor.denoise = !noDenoise
        configuration.preprocessor.automaticGainControl = !noAutomaticGainControl
    }

    func encoderConfiguration() throws -> OpusEncoderConfiguration {
        var configuration = OpusEncoderConfiguration()
        configuration.frameMilliseconds = frameMilliseconds
        configuration.bitrate = bitrate
        configuration.forwardErrorCorrection = !noFEC
        configuration.discontinuousTransmission = dtx
        do {
            try configuration.validate()
        } catch {
            throw ValidationError("\(error)")
        }
        return configuration
    }
}

/// How this peer is reached and whom it calls.
struct NetworkOptions: ParsableArguments {
    @Option(help: "UDP port to listen on.")
    var port: Int = 5004

    @Option(help: ArgumentHelp("A peer to call, without discovery (repeatable).", valueName: "HOST:PORT"))
    var peer: [String] = []

    @Flag(name: .customLong("no-discovery"), help: "Do not publish or browse mDNS; call only --peer peers.")
    var noDiscovery = false

    @Option(help: ArgumentHelp("The name other peers see.", valueName: "NAME"))
    var name: String?
}

/// When this peer transmits.
struct TalkOptions: ParsableArguments {
    @Option(help: "When to transmit: open (always), vox (on speech) or ptt (while the talk key is held).")
    var mode: TalkMode = .open

    @Option(name: .customLong("vox-threshold"), help: "Speech probability (percent) that opens the VOX gate.")
    var voxThreshold = 80

    func apply(to configuration: inout CallConfiguration) throws {
        guard (1...99).contains(voxThreshold) else { throw ValidationError("--vox-threshold \(voxThreshold) is outside 1...99") }
        configuration.mode = mode
        configuration.preprocessor.vadStartProbability = voxThreshold
        configuration.preprocessor.vadContinueProbability = max(1, voxThreshold - 15)
    }
}

/// How long to run and what to report.
struct RunOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Leave the call cleanly after this many seconds.", valueName: "SECONDS"))
    var duration: Double?

    @Option(name: .customLong("stats-json"), help: ArgumentHelp("At exit, write the call's statistics to this JSON file.", valueName: "F"))
    var statsJSON: String?

    @Flag(name: .shortAndLong, help: "Log more.")
    var verbose = false
}

extension TalkMode: ExpressibleByArgument {}
