import ArgumentParser
import FoundationEssentials
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

    @OptionGroup var options: CallOptions

    func run() async throws {
        let settings = try options.resolved { StandardStream.error.write("warning: \($0)\n") }
        let run = settings.run
        let interactive = Terminal.isInteractive
        // The status screen owns the terminal: only warnings and errors may be logged over it.
        let logger = makeLogger(verbose: run.verbose, quiet: interactive || run.quiet)
        let call = try settings.makeCall(interactive: interactive, headless: false, logger: logger)
        settings.warnIfUnencrypted(logger: logger)
        let interface = TalkInterface(
            call: call, options: settings.talk.interfaceOptions(), terminal: interactive ? Terminal() : nil, button: try settings.talk.button()
        )
        var services: [any Service] = [CallService(call: call, duration: run.duration, interface: interface, logger: logger)]
        if settings.network.discovery { services.append(DiscoveryService(call: call, logger: logger)) }
        try await failing(as: .software) { try await IntercomServices.run(services, logger: logger) }
        try settings.writeStatistics(of: call)
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
