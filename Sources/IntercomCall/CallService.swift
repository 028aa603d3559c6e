import IntercomIO
import Logging
import ServiceLifecycle

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

/// Runs a call under a service group that turns SIGTERM and SIGINT into a graceful shutdown.
public struct CallRunner {
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
        let group = ServiceGroup(configuration: .init(
            services: [.init(
                service: CallService(call: call, duration: duration, interface: interface, systemd: systemd, logger: logger),
                successTerminationBehavior: .gracefullyShutdownGroup
            )],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
    }
}
