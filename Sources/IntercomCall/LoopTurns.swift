import IntercomCore
import IntercomIO
import Synchronization

/// One real-time thread's loop: whether to go round again (its stop flag), and a count of the
/// turns it has made, which the watchdog reads to tell a live thread from a stuck one. Each
/// loop's waits end within 100 ms (a device period, a frame's pacing, the network thread's
/// poll timeout), so a live thread turns many times between two watchdog pings even when idle.
final class LoopTurns: Sendable {
    let thread: String
    private let stop: SharedFlag
    private let turns = Atomic<UInt64>(0)
    /// For the watchdog's test: the monotonic time after which this loop stops turning, as a
    /// thread stuck in a driver would (it still leaves when asked to stop).
    private let stallAt: UInt64?

    init(thread: String, stop: SharedFlag, stallAt: UInt64? = nil) {
        self.thread = thread
        self.stop = stop
        self.stallAt = stallAt
    }

    /// Counts a turn; whether the loop should go on.
    func next() -> Bool {
        if let stallAt, SystemClock.monotonicNanoseconds() >= stallAt {
            while !stop.value.load(ordering: .relaxed) { SystemClock.sleep(untilMonotonic: SystemClock.monotonicNanoseconds() + MediaTime.nanoseconds(.milliseconds(10))) }
            return false
        }
        turns.wrappingAdd(1, ordering: .relaxed)
        return !stop.value.load(ordering: .relaxed)
    }

    var count: UInt64 { turns.load(ordering: .relaxed) }
}
