import IntercomCore
import IntercomIO
import Logging
import ServiceLifecycle
import Synchronization

/// `intercom page`: sends a file once to the call's target, as a page, and ends the group when
/// it has been sent. The file waits (its source hands over silence) until the target's devices
/// can hear it: at least one in the target with a session (in an encrypted call), and then a
/// moment for the others found at the same time; a target that reaches nobody within
/// `reachTimeout` sends nothing.
public struct PageService: Service {
    let call: Call
    let start: SharedFlag
    let fileSeconds: Double
    let reachTimeout: Duration
    let logger: Logger
    /// What came of it, for the command to report once the group has ended.
    public let outcome: SharedOutcome

    public final class SharedOutcome: Sendable {
        private let devices = Mutex<Int?>(nil)
        public init() {}
        /// How many devices the page went to; nil when it reached none.
        public var reached: Int? { devices.withLock { $0 } }
        func set(_ count: Int) { devices.withLock { $0 = count } }
    }

    public init(call: Call, start: SharedFlag, fileSeconds: Double, reachTimeout: Duration = .seconds(6), logger: Logger) {
        self.call = call
        self.start = start
        self.fileSeconds = fileSeconds
        self.reachTimeout = reachTimeout
        self.logger = logger
        outcome = SharedOutcome()
    }

    public func run() async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + reachTimeout
        var firstReached: ContinuousClock.Instant?
        while clock.now < deadline {
            let reached = call.devicesReached(by: call.target) ?? 0
            if reached > 0, firstReached == nil { firstReached = clock.now }
            // Devices found together come up within a few hundred milliseconds of each other.
            if let firstReached, clock.now - firstReached >= .milliseconds(600) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let reached = call.devicesReached(by: call.target) ?? 0
        guard reached > 0 else {
            logger.warning("the page reached no device of \(call.target): nothing was sent")
            return
        }
        outcome.set(reached)
        start.value.store(true, ordering: .relaxed)
        // The file, and its last packets' way through the receivers' jitter buffers.
        try await Task.sleep(for: .seconds(fileSeconds + 0.3))
    }
}
