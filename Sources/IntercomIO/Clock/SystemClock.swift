import Glibc
import IntercomCore

/// The two clocks intercom reads: a monotonic one for pacing and measuring, and the
/// wall clock for timestamps other processes can compare (RTCP NTP times, stats files).
public enum SystemClock {
    /// Nanoseconds of CLOCK_MONOTONIC: never jumps, the time base of every `now` in the core.
    public static func monotonicNanoseconds() -> UInt64 { read(CLOCK_MONOTONIC) }

    /// Nanoseconds since the Unix epoch (CLOCK_REALTIME).
    public static func realtimeNanoseconds() -> UInt64 { read(CLOCK_REALTIME) }

    /// The monotonic clock, typed.
    public static func monotonicNow() -> MonotonicInstant { MonotonicInstant(nanoseconds: monotonicNanoseconds()) }

    /// The wall clock, typed.
    public static func wallClockNow() -> WallClockTime { WallClockTime(nanosecondsSince1970: realtimeNanoseconds()) }

    /// Sleeps until the monotonic clock reads `deadline`; returns at once if it has passed.
    public static func sleep(untilMonotonic deadline: UInt64) {
        var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        // clock_nanosleep returns the error number itself rather than setting errno.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }

    private static func read(_ clock: clockid_t) -> UInt64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
