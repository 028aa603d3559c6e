import ArgumentParser
import FoundationEssentials
import Glibc
import IntercomCall
import IntercomCore
import IntercomIO
import Logging
import ServiceLifecycle

/// `intercom daemon`: the intercom with no terminal, for a Raspberry Pi started by systemd.
struct Daemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run headless (systemd, a Raspberry Pi): voice activation or a talk button, and a status socket.",
        discussion: """
            Talks in VOX mode unless --mode or a talk button (--ptt-device) says otherwise. Pairs its \
            own identity when 'intercom pair' asks it to over the status socket, and sends the \
            pages 'intercom page' hands it there. Answers \
            'intercom status' on a Unix socket (\(StatusSocket.defaultPath)). SIGTERM leaves the \
            call cleanly; SIGHUP re-reads the configuration file and applies the mode, the VOX \
            threshold, the rooms and target (--room, --to) and new peers without dropping the call.
            """
    )

    @OptionGroup var options: CallOptions

    @Option(name: .customLong("status-socket"), help: ArgumentHelp("Where to answer status requests.", valueName: "PATH"))
    var statusSocket = StatusSocket.defaultPath

    func run() async throws {
        let logger = makeLogger(verbose: options.run.verbose, quiet: options.run.quiet)
        let settings = try options.resolved { logger.warning("\($0)") }
        let call = try settings.makeCall(interactive: false, headless: true, logger: logger)
        settings.warnIfUnencrypted(logger: logger)
        let pairing = call.configuration.security.map { DaemonPairing(security: $0, name: call.configuration.name, logger: logger) }
        let page = DaemonPage(call: call, logger: logger)
        let status = try failing(as: .cannotCreate) {
            try StatusSocket(path: statusSocket) { request, client in
                StatusReport.reply(to: request, from: client, call: call, pairing: pairing, page: page)
            }
        }
        let talk = settings.talk
        let button = try talk.button()
        let gpio = try talk.gpioControls()
        let hasControls = button != nil || !gpio.talkButtons.isEmpty || gpio.transmitLamp != nil || gpio.receiveLamp != nil
        let interface = hasControls
            ? TalkInterface(call: call, options: talk.interfaceOptions(), terminal: nil, button: button, gpio: gpio)
            : nil
        // Until the reload service listens, a SIGHUP must not end the daemon (its default action).
        signal(SIGHUP, SIG_IGN)
        let systemd = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        var services: [any Service] = [
            CallService(call: call, duration: settings.run.duration, interface: interface, systemd: systemd, logger: logger),
        ]
        if settings.network.discovery { services.append(DiscoveryService(call: call, logger: logger)) }
        services += [
            StatusSocketService(socket: status),
            ReloadService(call: call, systemd: systemd, logger: logger) { try reloaded(logger: logger) },
        ]
        logger.info("daemon running", metadata: ["mode": "\(call.configuration.mode.rawValue)", "status": "\(statusSocket)"])
        try await failing(as: .software) { try await IntercomServices.run(services, logger: logger) }
        try settings.writeStatistics(of: call)
    }

    /// What a reload may change, as the configuration file (under the command line) says now.
    private func reloaded(logger: Logger) throws -> CallReload {
        let fresh = try options.resolved { logger.warning("\($0)") }
        return CallReload(
            mode: fresh.talk.effectiveMode(interactive: false, fileInput: fresh.audio.inputFile != nil, headless: true),
            voxThreshold: fresh.talk.voxThreshold, peers: try fresh.network.peerAddresses(),
            rooms: try fresh.network.rooms(), target: try fresh.network.callTarget()
        )
    }
}

/// `intercom status`: asks the running daemon how the call is going.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the running daemon's peers, link figures, mode and levels.")

    @Flag(help: "Print the status as JSON.")
    var json = false

    @Option(help: ArgumentHelp("The daemon's status socket; at the default path, the service's (\(StatusSocket.systemPath)) when nothing answers there.", valueName: "PATH"))
    var socket = StatusSocket.defaultPath

    func run() throws {
        let reply = try failing(as: .unavailable) { try StatusSocket.ask(.status, path: socket) }
        // The figures, or a refusal (`StatusReply`).
        if let refused = try? StatusReply(line: reply) {
            throw Failure(.unavailable, message: "the daemon answered: \(refused.refusal)")
        }
        let data = Data(reply.utf8)
        if json {
            print(reply, terminator: "")
        } else {
            print(try StatusReport(json: data).text)
        }
    }
}
