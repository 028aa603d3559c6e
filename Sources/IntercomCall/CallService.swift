import Atomics
import Logging
import ServiceLifecycle

/// Runs a call as a long-lived service: until its duration is over, the user quits, or
/// SIGTERM or SIGINT asks for a graceful shutdown; then leaves the call cleanly (BYE, output
/// finished) and gives the terminal back.
public struct CallService: Service {
    let call: Call
    let duration: Double?
    let interface: TalkInterface?

    public init(call: Call, duration: Double?, interface: TalkInterface? = nil) {
        self.call = call
        self.duration = duration
        self.interface = interface
    }

    public func run() async throws {
        try call.start()
        defer { call.stop() }
        try interface?.start()
        defer { interface?.stop() }
        let deadline = duration.map { ContinuousClock.now + .seconds($0) }
        try? await cancelWhenGracefulShutdown {
            while !(interface?.quitRequested.load(ordering: .relaxed) ?? false) {
                if let deadline, ContinuousClock.now >= deadline { return }
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
    let logger: Logger

    public init(call: Call, duration: Double?, interface: TalkInterface? = nil, logger: Logger) {
        self.call = call
        self.duration = duration
        self.interface = interface
        self.logger = logger
    }

    public func run() async throws {
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: CallService(call: call, duration: duration, interface: interface), successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
    }
}
