import FoundationEssentials
import IntercomCore
import IntercomDSP
import IntercomIO
import Logging

/// A real call between two peers in this process, over loopback UDP through the impairment
/// relay: peer A speaks a file, peer B writes what it hears to a file; then the delay is
/// measured from the audio itself and the loss figures are read from B's statistics.
public struct LoopbackDemo {
    public var inputFile: String
    public var outputFile: String
    public var profile: ImpairmentProfile
    public var encoder: OpusEncoderConfiguration
    /// Both peers switch between the low-delay and the robust encoder (`CallConfiguration`).
    public var adaptiveCodec = true
    /// Extra seconds after the input ends, for the last packets to play out.
    public var tailSeconds = 1.0
    /// Encrypts the call (both peers share one identity); nil for plain RTP.
    public var security: CallSecurity?

    public init(inputFile: String, outputFile: String, profile: ImpairmentProfile, encoder: OpusEncoderConfiguration) {
        self.inputFile = inputFile
        self.outputFile = outputFile
        self.profile = profile
        self.encoder = encoder
    }

    public struct Report: Sendable {
        /// Mouth-to-ear: from a sample entering A's microphone to leaving B's speaker.
        public var delayMilliseconds: Double
        /// How alike input and output are, aligned window by window (median; 1 = identical waveform).
        public var correlation: Double
        public var listener: CallStatistics
        public var relay: ImpairmentRelay.Counters
    }

    public func run(logger: Logger) async throws -> Report {
        var listenerConfiguration = CallConfiguration()
        listenerConfiguration.port = 0
        listenerConfiguration.name = "loopback-B"
        listenerConfiguration.encoder = encoder
        listenerConfiguration.adaptiveCodec = adaptiveCodec
        let frame = listenerConfiguration.period
        listenerConfiguration.security = security
        listenerConfiguration.encoder.constrainedVariableBitrate = security != nil
        let listener = try Call(
            configuration: listenerConfiguration, source: SilentSource(frameLength: frame),
            sink: try WAVFileSink(path: outputFile, frameLength: frame), logger: logger
        )
        let relay = try ImpairmentRelay(.init(peerB: .loopbackIPv4(port: listener.localPort), aToB: profile, bToA: profile))
        defer { relay.stop() }

        let source = try WAVFileSource(path: inputFile, frameLength: frame)
        var speakerConfiguration = listenerConfiguration
        speakerConfiguration.name = "loopback-A"
        speakerConfiguration.staticPeers = [relay.sideAAddress]
        let speaker = try Call(configuration: speakerConfiguration, source: source, sink: NullSink(frameLength: frame), logger: logger)

        try listener.start()
        try speaker.start()
        let seconds = Double(source.sampleCount) / Double(VoiceFormat.sampleRate) + tailSeconds
        try await Task.sleep(for: .seconds(seconds))
        speaker.stop()
        listener.stop()

        let speakerStatistics = speaker.statistics()
        let listenerStatistics = listener.statistics()
        let input = try WAVCodec.decode(try readFile(inputFile))
        let output = try WAVCodec.decode(try readFile(outputFile))
        let inputSamples = input.sampleRate == VoiceFormat.sampleRate
            ? input.mixedToMono()
            : try Resampler(inputRate: input.sampleRate, outputRate: VoiceFormat.sampleRate).process(input.mixedToMono())
        // A rough lag over the first seconds (up to one second of delay), then half-second
        // windows around it, since the jitter buffer may change the delay during the call.
        let rough = SignalAlignment.bestLag(
            of: inputSamples, in: output.samples, lags: 0...VoiceFormat.sampleRate, window: 3 * VoiceFormat.sampleRate
        )
        let windows = SignalAlignment.windowedMatches(
            of: inputSamples, in: output.samples, around: rough.lag, search: VoiceFormat.samples(milliseconds: 100)
        )
        let lag = median(windows.map { Double($0.lag) }) ?? Double(rough.lag)
        let lagNanoseconds = MediaTime.nanoseconds(samples: lag)
        let delay = MediaTime.milliseconds(
            nanoseconds: Double(listenerStatistics.outputStartNs) + lagNanoseconds - Double(speakerStatistics.inputStartNs)
        )
        return Report(
            delayMilliseconds: delay, correlation: median(windows.map(\.correlation)) ?? rough.correlation,
            listener: listenerStatistics, relay: relay.counters(.aToB)
        )
    }

    private func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        return values.sorted()[values.count / 2]
    }

    private func readFile(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
