import ArgumentParser
import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Logging
import ServiceLifecycle

/// The call itself: what `intercom` with no subcommand runs.
struct Talk: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join the call (the default).",
        discussion: "Sends the microphone (or --input-file) to every peer and plays what they send."
    )

    @OptionGroup(title: "Audio") var audio: AudioOptions
    @OptionGroup(title: "Network") var network: NetworkOptions
    @OptionGroup(title: "Talk") var talk: TalkOptions
    @OptionGroup(title: "Run") var run: RunOptions
    @OptionGroup(title: "Identity") var identity: IdentityOptions

    func run() async throws {
        let interactive = Terminal.isInteractive
        // The status screen owns the terminal: only warnings and errors may be logged over it.
        let logger = makeLogger(verbose: run.verbose, quiet: interactive || run.quiet)
        let call = try makeCall(interactive: interactive, headless: false, logger: logger)
        warnIfUnencrypted(logger: logger)
        let interface = TalkInterface(
            call: call, options: talk.interfaceOptions(), terminal: interactive ? Terminal() : nil, button: try talk.button()
        )
        var services: [any Service] = [CallService(call: call, duration: run.duration, interface: interface, logger: logger)]
        if !network.noDiscovery { services.append(DiscoveryService(call: call, logger: logger)) }
        try await failing(as: .software) { try await IntercomServices.run(services, logger: logger) }
        try writeStatistics(of: call)
    }

    /// Builds the call the options describe, with its audio endpoints.
    func makeCall(interactive: Bool, headless: Bool, logger: Logger) throws -> Call {
        let configuration = try callConfiguration(interactive: interactive, headless: headless)
        let frame = configuration.frameSamples
        let source: AudioSource = try audio.inputFile.map { path in
            // A file that is not there (or may not be read) is missing input; one that is, but is no WAV, bad input.
            try failing(as: access(path, R_OK) == 0 ? .badInput : .noInput) { try WAVFileSource(path: path, frameSamples: frame) }
        } ?? ALSACaptureSource(device: audio.capture, frameSamples: frame, bufferMilliseconds: audio.audioBufferMilliseconds, logger: logger)
        let sink: AudioSink = try audio.outputFile.map { path in
            try failing(as: .cannotCreate) { try WAVFileSink(path: path, frameSamples: frame) }
        } ?? ALSAPlaybackSink(device: audio.playback, frameSamples: frame, bufferMilliseconds: audio.audioBufferMilliseconds, logger: logger)

        return try failing(as: .unavailable) { try Call(configuration: configuration, source: source, sink: sink, logger: logger) }
    }

    /// Plain RTP is for interop only: say so at every start, on the screen and in the log.
    func warnIfUnencrypted(logger: Logger) {
        guard network.unencrypted else { return }
        let warning = "unencrypted: anyone on the LAN can listen to this call and talk into it (--unencrypted)"
        FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
        logger.warning("\(warning)")
    }

    func writeStatistics(of call: Call) throws {
        if let path = run.statsJSON {
            try failing(as: .cannotCreate) { try PrivateFile.writeOutput(path, Array(call.statistics().jsonData())) }
        }
    }

    func callConfiguration(interactive: Bool, headless: Bool = false) throws -> CallConfiguration {
        var configuration = CallConfiguration()
        configuration.port = network.port
        configuration.bindAddress = try network.bindAddress()
        configuration.staticPeers = try network.peerAddresses()
        if let name = network.name { configuration.name = name }
        try talk.apply(to: &configuration, interactive: interactive, fileInput: audio.inputFile != nil, headless: headless)
        try audio.apply(to: &configuration)
        configuration.stallForTesting = try run.stall()
        if !network.unencrypted {
            configuration.security = try failing(as: .cannotCreate) { try identity.callSecurity(rekeySeconds: network.rekeySeconds) }
        }
        configuration.encoder.constrainedVariableBitrate = configuration.security != nil
        return configuration
    }
}

/// The log: to the journal with priorities when systemd connected stderr to it, else as plain
/// lines on stderr. `quiet` keeps warnings and errors only, `verbose` adds debugging.
func makeLogger(verbose: Bool, quiet: Bool = false) -> Logger {
    let level: Logger.Level = quiet ? .warning : verbose ? .debug : .info
    let journal = JournalLogHandler.isJournal(environment: ProcessInfo.processInfo.environment)
    LoggingSystem.bootstrap { label in
        if journal { return JournalLogHandler(label: label, level: level) }
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    return Logger(label: "intercom")
}
