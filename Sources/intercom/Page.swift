import ArgumentParser
import IntercomCall
import IntercomCore
import IntercomIO
import ServiceLifecycle

/// `intercom page`: a chime or a recorded message, played once to the target over everything
/// else (a doorbell script's command).
struct Page: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a WAV file once to every device, a room or one device, over everything else.",
        discussion: """
            Sends --input-file with this device's identity to the target (--to; the configured \
            one by default) once its devices can hear it, and exits when it has been sent (69 \
            when no device was reached). Receivers play it over the other devices, which they \
            turn down meanwhile (--page-ducking-db), even where its sender is muted; a device \
            run with --no-pages refuses pages.
            """
    )

    @OptionGroup var options: CallOptions

    func validate() throws {
        guard options.settings.audio.inputFile != nil else { throw ValidationError("a page needs --input-file FILE.wav") }
    }

    func run() async throws {
        let settings = try options.resolved { StandardStream.error.write("warning: \($0)\n") }
        let logger = makeLogger(verbose: settings.run.verbose, quiet: settings.run.quiet)
        let start = SharedFlag()
        let call = try settings.makeCall(interactive: false, headless: true, logger: logger, page: start)
        settings.warnIfUnencrypted(logger: logger)
        let fileSeconds = Double(try failing(as: .badInput) { try WAVRecording.read(path: settings.audio.inputFile ?? "") }.count) / 48_000
        let page = PageService(call: call, start: start, fileSeconds: fileSeconds, logger: logger)
        var services: [any Service] = [CallService(call: call, duration: nil, logger: logger), page]
        if settings.network.discovery { services.append(DiscoveryService(call: call, logger: logger)) }
        try await failing(as: .software) { try await IntercomServices.run(services, logger: logger) }
        try settings.writeStatistics(of: call)
        guard let reached = page.outcome.reached else {
            throw Failure(.unavailable, message: "no device of \(TerminalText.sanitized(call.target.description)) could be reached: nothing was sent")
        }
        print("paged \(reached) device\(reached == 1 ? "" : "s") (\(TerminalText.sanitized(call.target.description)))")
    }
}
