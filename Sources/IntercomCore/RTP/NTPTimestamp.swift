/// A 64-bit NTP timestamp (RFC 5905): seconds since 1900 and a binary fraction of a second.
///
/// RTCP sender reports carry it; report blocks echo its middle 32 bits (the "short format",
/// 16.16 fixed-point seconds) to let the sender measure the round trip.
public struct NTPTimestamp: Hashable, Sendable {
    public var seconds: UInt32
    public var fraction: UInt32

    /// Seconds between the NTP epoch (1900) and the Unix epoch (1970).
    public static let unixEpochOffsetSeconds: UInt64 = 2_208_988_800

    public init(seconds: UInt32, fraction: UInt32) {
        self.seconds = seconds
        self.fraction = fraction
    }

    /// The timestamp from its 64-bit wire value.
    public init(rawValue: UInt64) {
        self.init(seconds: UInt32(truncatingIfNeeded: rawValue >> 32), fraction: UInt32(truncatingIfNeeded: rawValue))
    }

    /// The timestamp for a realtime clock reading in nanoseconds since the Unix epoch.
    ///
    /// Seconds wrap modulo 2^32 as NTP defines (era 1 starts in 2036).
    public init(unixNanoseconds: UInt64) {
        let wholeSeconds = unixNanoseconds / 1_000_000_000
        let remainder = unixNanoseconds % 1_000_000_000
        self.init(
            seconds: UInt32(truncatingIfNeeded: wholeSeconds &+ Self.unixEpochOffsetSeconds),
            fraction: UInt32(truncatingIfNeeded: (remainder << 32) / 1_000_000_000)
        )
    }

    /// The 64-bit wire value.
    public var rawValue: UInt64 { (UInt64(seconds) << 32) | UInt64(fraction) }

    /// The middle 32 bits: the NTP short format used for LSR and DLSR.
    public var shortFormat: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }
}

/// Conversions between nanoseconds and NTP short-format durations (units of 1/65536 s).
public enum NTPShortFormat {
    /// A duration in 1/65536 s, saturating at the largest representable value.
    public static func fromNanoseconds(_ nanoseconds: UInt64) -> UInt32 {
        let whole = nanoseconds / 1_000_000_000
        guard whole < 1 << 16 else { return .max }
        let fractional = ((nanoseconds % 1_000_000_000) << 16) / 1_000_000_000
        return UInt32((whole << 16) | fractional)
    }

    /// A duration in 1/65536 s as nanoseconds.
    public static func toNanoseconds(_ value: UInt32) -> UInt64 {
        (UInt64(value) * 1_000_000_000) >> 16
    }
}
