import ArgumentParser
import Foundation
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
            own identity when 'intercom pair' asks it to over the status socket. Answers \
            'intercom status' on a Unix socket (\(StatusSocket.defaultPath)). SIGTERM leaves the \
            call cleanly; SIGHUP re-reads the configuration file and applies the mode, the VOX \
            threshold and new peers without dropping the call.
            """
    )

    @OptionGroup(title: "Audio") var audio: AudioOptions
    @OptionGroup(title: "Network") var network: NetworkOptions
    @OptionGroup(title: "Talk") var talk: TalkOptions
    @OptionGroup(title: "Run") var run: RunOptions
    @OptionGroup(title: "Identity") var identity: IdentityOptions

    @Option(name: .customLong("status-socket"), help: ArgumentHelp("Where to answer status requests.", valueName: "PATH"))
    var statusSocket = StatusSocket.defaultPath

    func run() async throws {
        let logger = makeLogger(verbose: run.verbose, quiet: run.quiet)
        // The configuration file stands before the command line, as for a call.
        let file = try failing(as: .configuration) { try ConfigurationFile.load() }
        for warning in file.warnings { logger.warning("\(warning)") }
        let talkCommand = try Talk.parse(file.arguments + callArguments())
        let call = try talkCommand.makeCall(interactive: false, headless: true, logger: logger)
        talkCommand.warnIfUnencrypted(logger: logger)
        let pairing = call.configuration.security.map { DaemonPairing(security: $0, name: call.configuration.name, logger: logger) }
        let status = try failing(as: .cannotCreate) {
            try StatusSocket(path: statusSocket) { request, fromOwnerOrRoot in
                StatusReport.reply(to: request, fromOwnerOrRoot: fromOwnerOrRoot, call: call, pairing: pairing)
            }
        }
        let talk = talkCommand.talk
        let button = try talk.button()
        let gpio = try talk.gpioControls()
        let hasControls = button != nil || gpio.talkButton != nil || gpio.transmitLamp != nil || gpio.receiveLamp != nil
        let interface = hasControls
            ? TalkInterface(call: call, options: talk.interfaceOptions(), terminal: nil, button: button, gpio: gpio)
            : nil
        // Until the reload service listens, a SIGHUP must not end the daemon (its default action).
        signal(SIGHUP, SIG_IGN)
        let systemd = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        var services: [any Service] = [
            CallService(call: call, duration: talkCommand.run.duration, interface: interface, systemd: systemd, logger: logger),
        ]
        if !talkCommand.network.noDiscovery { services.append(DiscoveryService(call: call, logger: logger)) }
        let given = callArguments()
        services += [
            StatusSocketService(socket: status),
            ReloadService(call: call, systemd: systemd, logger: logger) { try Self.reloaded(given: given, logger: logger) },
        ]
        logger.info("daemon running", metadata: ["mode": "\(call.configuration.mode.rawValue)", "status": "\(statusSocket)"])
        try await failing(as: .software) { try await IntercomServices.run(services, logger: logger) }
        try talkCommand.writeStatistics(of: call)
    }

    /// What a reload may change, as the configuration file (under the command line's own
    /// arguments, `given`) says now.
    private static func reloaded(given: [String], logger: Logger) throws -> CallReload {
        let file = try ConfigurationFile.load()
        for warning in file.warnings { logger.warning("\(warning)") }
        let fresh = try Talk.parse(file.arguments + given)
        return CallReload(
            mode: fresh.talk.effectiveMode(interactive: false, fileInput: fresh.audio.inputFile != nil, headless: true),
            voxThreshold: fresh.talk.voxThreshold, peers: try fresh.network.peerAddresses()
        )
    }

    /// This command's own arguments, as the call command takes them.
    private func callArguments() -> [String] {
        let given = Array(CommandLine.arguments.drop { $0 != Self._commandName }.dropFirst())
        var skip = false
        return given.filter { argument in
            if skip { skip = false; return false }
            if argument == "--status-socket" { skip = true; return false }
            return !argument.hasPrefix("--status-socket=")
        }
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
        guard !reply.hasPrefix("error"), let data = reply.data(using: .utf8) else {
            throw Failure(.unavailable, message: "the daemon answered: \(reply.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        if json {
            print(reply, terminator: "")
        } else {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            print(try decoder.decode(StatusReport.self, from: data).text)
        }
    }
}
