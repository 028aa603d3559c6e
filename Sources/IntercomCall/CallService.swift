import IntercomCore
import IntercomIO
import Logging
import ServiceLifecycle
import UnixSignals

/// Runs a call as a long-lived service: until its duration is over, the user quits, or
/// SIGTERM or SIGINT asks for a graceful shutdown; then leaves the call cleanly (BYE, output
/// finished) and gives the terminal back.
public struct CallService: Service {
    let call: Call
    let duration: Double?
    let interface: TalkInterface?
    let systemd: SystemdNotifier
    let logger: Logger

    public init(
        call: Call, duration: Double?, interface: TalkInterface? = nil, systemd: SystemdNotifier = .init(environment: [:]), logger: Logger
    ) {
        self.call = call
        self.duration = duration
        self.interface = interface
        self.systemd = systemd
        self.logger = logger
    }

    public func run() async throws {
        try call.start()
        defer { call.stop() }
        try interface?.start()
        defer { interface?.stop() }
        systemd.ready(status: "in the call on port \(call.localPort)")
        defer { systemd.stopping() }
        if let startup = StartupFigures.now() {
            // How long since the process started (the kernel's 10 ms tick), less the time its
            // threads waited for a CPU, and its own CPU time: what a Pi's boot waits for.
            func milliseconds(_ span: Duration) -> String {
                "\(Int(MediaTime.milliseconds(nanoseconds: Double(MediaTime.nanoseconds(span))).rounded()))"
            }
            logger.info("ready", metadata: [
                "after_ms": "\(milliseconds(startup.sinceStart))", "own_ms": "\(milliseconds(startup.ownTime))",
                "cpu_ms": "\(milliseconds(startup.processor))",
            ])
        }
        // Waits for whichever comes first: the end of the duration, the quit key, or the
        // graceful shutdown. Nothing polls: a task that wakes every few milliseconds costs
        // the runtime a little memory each time, and a call may run for weeks.
        try? await cancelWhenGracefulShutdown {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    guard let duration else { return try await Self.sleepUntilCancelled() }
                    try await Task.sleep(for: .seconds(duration))
                }
                group.addTask {
                    guard let interface else { return try await Self.sleepUntilCancelled() }
                    for await _ in interface.quitRequests { return }
                    try Task.checkCancellation()
                }
                // Pings at half the interval systemd asked for, so one late wake-up is no failure,
                // and only while the capture, playback and network threads all turn their loops:
                // a stuck one lets systemd restart the service.
                if let interval = systemd.watchdogInterval {
                    group.addTask {
                        var reported: [String] = []
                        while true {
                            let stuck = call.stuckThreads()
                            if stuck.isEmpty {
                                systemd.watchdog()
                            } else if stuck != reported {
                                logger.critical("no watchdog ping: the \(stuck.joined(separator: ", ")) thread has not turned its loop for \(interval / 2_000_000) ms")
                            }
                            reported = stuck
                            try await Task.sleep(for: .nanoseconds(Int64(interval / 2)))
                        }
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    private static func sleepUntilCancelled() async throws {
        while true { try await Task.sleep(for: .seconds(3_600)) }
    }
}

/// The long-running parts of a running intercom in one `ServiceGroup`: the call, and whichever
/// of discovery, the status socket and configuration reload it has. SIGTERM and SIGINT shut
/// them all down gracefully, and so does any of them ending (the call's duration, the quit key).
public enum IntercomServices {
    public static func run(_ services: [any Service], logger: Logger) async throws {
        let group = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
    }
}

/// mDNS discovery for a call, for as long as the group runs. Discovery that cannot start is a
/// warning and a fault on the status displays: peers named with --peer still work.
public struct DiscoveryService: Service {
    let call: Call
    let logger: Logger

    public init(call: Call, logger: Logger) {
        self.call = call
        self.logger = logger
    }

    public func run() async throws {
        let discovery: CallDiscovery?
        do {
            // Whether avahi-daemon answers, its own events say (`CallDiscovery` sets the status):
            // they may come before this line returns, so nothing is set here on success.
            discovery = try CallDiscovery(call: call, logger: logger)
        } catch {
            discovery = nil
            call.setDiscoveryStatus(.unavailable)
            logger.warning("mDNS discovery could not start (\(error)); call peers with --peer HOST:PORT")
        }
        defer { discovery?.stop() }
        try? await gracefulShutdown()
    }
}

/// A daemon's status socket, answering until the group shuts down.
public struct StatusSocketService: Service {
    let socket: StatusSocket

    public init(socket: StatusSocket) {
        self.socket = socket
    }

    public func run() async throws {
        defer { socket.stop() }
        try? await gracefulShutdown()
    }
}

/// SIGHUP: the settings that may change during a call (`CallReload`), read again and applied
/// without dropping the call; systemd hears RELOADING and READY around it.
public struct ReloadService: Service {
    let call: Call
    let systemd: SystemdNotifier
    let logger: Logger
    /// Reads the settings as they are now (the configuration file, under the command line's).
    let read: @Sendable () throws -> CallReload

    public init(call: Call, systemd: SystemdNotifier, logger: Logger, read: @escaping @Sendable () throws -> CallReload) {
        self.call = call
        self.systemd = systemd
        self.logger = logger
        self.read = read
    }

    public func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            systemd.reloading()
            do {
                call.apply(try read(), logger: logger)
                logger.info("configuration reloaded; audio, codec and port settings apply at the next start")
            } catch {
                logger.error("configuration not reloaded: \(error)")
            }
            systemd.ready(status: "configuration reloaded")
        }
    }
}

/// What a reload may change during a call.
public struct CallReload: Sendable {
    public var mode: TalkMode
    public var voxThreshold: Int
    public var peers: [SocketAddress]
    public var rooms: [GroupName]
    public var target: CallTarget

    public init(mode: TalkMode, voxThreshold: Int, peers: [SocketAddress], rooms: [GroupName] = [], target: CallTarget = .all) {
        self.mode = mode
        self.voxThreshold = voxThreshold
        self.peers = peers
        self.rooms = rooms
        self.target = target
    }
}

extension Call {
    /// Applies reloaded settings: the talk mode, the VOX threshold, the rooms and target, and
    /// peers not called yet.
    public func apply(_ reload: CallReload, logger: Logger) {
        if reload.mode != mode {
            logger.notice("mode changed", metadata: ["from": "\(mode.rawValue)", "to": "\(reload.mode.rawValue)"])
            setMode(reload.mode)
        }
        setVoxThreshold(reload.voxThreshold)
        if reload.rooms != rooms {
            logger.notice("rooms changed", metadata: ["rooms": "\(reload.rooms.map(\.text))"])
            setRooms(reload.rooms)
        }
        if reload.target != chosenTarget {
            logger.notice("target changed", metadata: ["to": "\(reload.target)"])
            setTarget(reload.target)
        }
        for peer in reload.peers where !configuration.staticPeers.contains(peer) {
            addPeer(peer)
            logger.notice("peer added", metadata: ["peer": "\(peer)"])
        }
    }
}
