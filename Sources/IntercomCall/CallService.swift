import Logging
import ServiceLifecycle

/// Runs a call as a long-lived service: until its duration is over, or until SIGTERM or
/// SIGINT asks for a graceful shutdown; then leaves the call cleanly (BYE, output finished).
public struct CallService: Service {
    let call: Call
    let duration: Double?

    public init(call: Call, duration: Double?) {
        self.call = call
        self.duration = duration
    }

    public func run() async throws {
        try call.start()
        defer { call.stop() }
        if let duration {
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: .seconds(duration))
            }
        } else {
            try? await gracefulShutdown()
        }
    }
}

/// Runs a call under a service group that turns SIGTERM and SIGINT into a graceful shutdown.
public struct CallRunner {
    let call: Call
    let duration: Double?
    let logger: Logger

    public init(call: Call, duration: Double?, logger: Logger) {
        self.call = call
        self.duration = duration
        self.logger = logger
    }

    public func run() async throws {
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: CallService(call: call, duration: duration), successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
    }
}
