import ArgumentParser
import Glibc
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
            when no device was reached). Where a daemon runs (its status socket, --socket) and \
            no --state-dir says whose identity to use, the daemon sends it at once, from its \
            identity and in place of its microphone, to --to or else its own target (at most \
            \(DaemonPage.maximumSeconds) s). Receivers play it over the other devices, which they \
            turn down meanwhile (--page-ducking-db), even where its sender is muted; a device \
            run with --no-pages refuses pages.
            """
    )

    @OptionGroup var options: CallOptions

    @Option(help: ArgumentHelp("A running daemon's status socket: without --state-dir, a daemon found there sends the page.", valueName: "PATH"))
    var socket = StatusSocket.defaultPath

    func validate() throws {
        guard options.settings.audio.inputFile != nil else { throw ValidationError("a page needs --input-file FILE.wav") }
    }

    func run() async throws {
        if options.identity.stateDirectory == nil, let daemon = StatusSocket.running(at: socket) {
            return try pageThroughDaemon(at: daemon)
        }
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

extension Page {
    /// Hands the file, open, to the daemon at `path` and waits until it has been sent.
    private func pageThroughDaemon(at path: String) throws {
        let file = options.settings.audio.inputFile ?? ""
        let target = try options.settings.network.target.map { text in
            do throws(CallTargetError) {
                return try CallTarget(parsing: text)
            } catch {
                throw ValidationError("--to: \(error)")
            }
        }
        let request = StatusRequest.page(target: target)
        guard StatusRequest.parse(Array(request.line.utf8)) == .success(request) else {
            throw ValidationError("--to: a target's name is printable, without spaces at its ends")
        }
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(.noInput, message: "\(file): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let daemon = DaemonRequest(socket: path, otherwise: "page with another state directory's identity (--state-dir)")
        let answer = try daemon.ask(request, passing: descriptor)
        guard case .paging(_, let seconds, _) = answer else { throw Self.refusal(answer) }
        // The daemon answers once it has begun; the page has been sent when the daemon says so.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(seconds + 5)
        while clock.now < deadline {
            switch try daemon.ask(.pageResult) {
            case .paged(let devices, let target):
                print("paged \(devices) device\(devices == 1 ? "" : "s") (\(target)) through the daemon (\(path))")
                return
            case .pagePlaying:
                usleep(100_000)
            case let other:
                throw Self.refusal(other)
            }
        }
        throw Failure(.unavailable, message: "the daemon did not say the page was sent within \(Int(seconds + 5)) s")
    }

    private static func refusal(_ answer: StatusReply) -> Failure {
        // Nobody to hear it, or another page playing: try again later. Anything else is the file.
        if case .refused(_, let later) = answer, !later { return Failure(.badInput, message: "the daemon answered: \(answer.refusal)") }
        return Failure(.unavailable, message: "the daemon answered: \(answer.refusal)")
    }
}
