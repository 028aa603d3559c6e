import ArgumentParser
import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Logging

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

    func run() async throws {
        let interactive = Terminal.isInteractive
        // The status screen owns the terminal: only errors may be logged over it.
        let logger = makeLogger(verbose: run.verbose, quiet: interactive)
        let call = try makeCall(interactive: interactive, headless: false, logger: logger)
        let interface = TalkInterface(
            call: call, options: talk.interfaceOptions(), terminal: interactive ? Terminal() : nil, button: try talk.button()
        )
        try await CallRunner(call: call, duration: run.duration, interface: interface, logger: logger).run()
        try writeStatistics(of: call)
    }

    /// Builds the call the options describe, with its audio endpoints.
    func makeCall(interactive: Bool, headless: Bool, logger: Logger) throws -> Call {
        let configuration = try callConfiguration(interactive: interactive, headless: headless)
        if !network.noDiscovery {
            logger.notice("discovery is not available yet: call peers with --peer HOST:PORT")
        }
        let source: AudioSource
        if let inputFile = audio.inputFile {
            source = try WAVFileSource(path: inputFile, frameSamples: configuration.frameSamples)
        } else {
            logger.notice("no sound card support yet: listening only (give --input-file F.wav to talk)")
            source = SilentSource(frameSamples: configuration.frameSamples)
        }
        let sink: AudioSink = try audio.outputFile.map { path throws(AudioEndpointError) in
            try WAVFileSink(path: path, frameSamples: configuration.frameSamples)
        } ?? NullSink(frameSamples: configuration.frameSamples)

        return try Call(configuration: configuration, source: source, sink: sink, logger: logger)
    }

    func writeStatistics(of call: Call) throws {
        if let path = run.statsJSON {
            try call.statistics().jsonData().write(to: URL(fileURLWithPath: path))
        }
    }

    func callConfiguration(interactive: Bool, headless: Bool = false) throws -> CallConfiguration {
        var configuration = CallConfiguration()
        configuration.port = network.port
        configuration.staticPeers = try network.peer.map { text in
            do {
                return try SocketAddress.parse(text, label: "--peer")
            } catch {
                throw ValidationError("\(error)")
            }
        }
        if let name = network.name { configuration.name = name }
        try talk.apply(to: &configuration, interactive: interactive, fileInput: audio.inputFile != nil, headless: headless)
        try audio.apply(to: &configuration)
        return configuration
    }
}

func makeLogger(verbose: Bool, quiet: Bool = false) -> Logger {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = quiet ? .error : verbose ? .debug : .info
        return handler
    }
    return Logger(label: "intercom")
}
