import Atomics
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

    public init(call: Call, duration: Double?, interface: TalkInterface? = nil, systemd: SystemdNotifier = .init(environment: [:])) {
        self.call = call
        self.duration = duration
        self.interface = interface
        self.systemd = systemd
    }

    public func run() async throws {
        try call.start()
        defer { call.stop() }
        try interface?.start()
        defer { interface?.stop() }
        systemd.ready(status: "in the call on port \(call.localPort)")
        defer { systemd.stopping() }
        let deadline = duration.map { ContinuousClock.now + .seconds($0) }
        // Pings at half the interval systemd asked for, so one late wake-up is no failure.
        let pingEvery = systemd.watchdogInterval.map { Duration.nanoseconds(Int64($0 / 2)) }
        try? await cancelWhenGracefulShutdown {
            var nextPing = ContinuousClock.now
            while !(interface?.quitRequested.load(ordering: .relaxed) ?? false) {
                if let deadline, ContinuousClock.now >= deadline { return }
                if let pingEvery, ContinuousClock.now >= nextPing {
                    systemd.watchdog()
                    nextPing = ContinuousClock.now + pingEvery
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
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
            services: [.init(service: CallService(call: call, duration: duration, interface: interface, systemd: systemd), successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
    }
}
