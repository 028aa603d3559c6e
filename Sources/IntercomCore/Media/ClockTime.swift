/// An instant of the monotonic clock (CLOCK_MONOTONIC), which never jumps: what every
/// decision and pacing is timed by. Told apart by type from a wall-clock time and from a
/// span, where they cross layers.
public struct MonotonicInstant: Comparable, Hashable, Sendable {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}

/// A time of the wall clock (CLOCK_REALTIME, nanoseconds since the Unix epoch): only for what
/// other processes and machines compare (RTCP's NTP timestamps, when a stream's first sample
/// was captured or played, in a stats file).
public struct WallClockTime: Comparable, Hashable, Sendable {
    public var nanosecondsSince1970: UInt64

    public init(nanosecondsSince1970: UInt64) {
        self.nanosecondsSince1970 = nanosecondsSince1970
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.nanosecondsSince1970 < rhs.nanosecondsSince1970 }
}
