/// The one place where audio time is converted: sample counts on the 48 kHz media clock
/// (`VoiceFormat.sampleRate`: Opus RTP timestamps, RFC 7587, and playout samples) or at a
/// device's own rate, to and from nanoseconds of a monotonic clock.
///
/// At 48 kHz one sample lasts exactly 62 500 / 3 ns, so a whole number of milliseconds
/// (48 samples each) converts exactly both ways; other values round as each function says.
/// Value arithmetic only: real-time threads call these freely.
public enum MediaTime {
    public static let nanosecondsPerSecond: Int64 = 1_000_000_000
    public static let nanosecondsPerMillisecond: Int64 = 1_000_000

    // 48 kHz: 1 sample = 62 500 / 3 ns (10^9 / 48 000 reduced), which keeps products small.
    private static let nanosecondsPerThreeSamples: Int64 = 62_500

    /// Duration of `samples` at 48 kHz in nanoseconds, rounded toward zero.
    public static func nanoseconds(samples: Int64) -> Int64 {
        samples * nanosecondsPerThreeSamples / 3
    }

    /// Duration of `samples` at 48 kHz in nanoseconds, unrounded (for statistics).
    public static func nanoseconds(samples: Double) -> Double {
        samples * Double(nanosecondsPerThreeSamples) / 3
    }

    /// Number of 48 kHz samples in `nanoseconds`, rounded toward zero.
    public static func samples(nanoseconds: Int64) -> Int64 {
        nanoseconds * 3 / nanosecondsPerThreeSamples
    }

    /// Duration of `samples` at 48 kHz in milliseconds, unrounded (for statistics).
    public static func milliseconds(samples: Double) -> Double {
        samples / Double(VoiceFormat.samplesPerMillisecond)
    }

    /// Number of 48 kHz samples in `milliseconds` (exact).
    public static func samples(milliseconds: Int) -> Int {
        samples(milliseconds: milliseconds, rate: VoiceFormat.sampleRate)
    }

    /// `nanoseconds` in milliseconds, unrounded (for reports).
    public static func milliseconds(nanoseconds: Double) -> Double {
        nanoseconds / 1e6
    }

    /// `nanoseconds` in seconds, unrounded (for reports and rate control).
    public static func seconds(nanoseconds: Double) -> Double {
        nanoseconds / 1e9
    }

    // Any rate: a sound card's negotiated rate, an RTP clock rate, a test's rate.

    /// Number of samples at `rate` Hz in `milliseconds`, rounded toward zero (exact when
    /// `rate` is a whole number of kHz).
    public static func samples(milliseconds: Int, rate: Int) -> Int {
        milliseconds * rate / 1000
    }

    /// Duration of `frames` at `rate` Hz in whole milliseconds, rounded toward zero.
    public static func milliseconds(frames: Int, rate: Int) -> Int {
        frames * 1000 / rate
    }

    /// `count` samples at `sourceRate` Hz expressed at `targetRate` Hz, rounded toward zero
    /// (a resampler's output for a block, before its filter's latency).
    public static func samples(_ count: Int, from sourceRate: Int, to targetRate: Int) -> Int {
        count * targetRate / sourceRate
    }

    /// Duration of `frames` at `rate` Hz in nanoseconds, rounded down. `frames` is not negative.
    public static func nanoseconds(frames: Int, rate: Int) -> UInt64 {
        UInt64(frames) * UInt64(nanosecondsPerSecond) / UInt64(rate)
    }

    /// Duration of `samples` at `rate` Hz in nanoseconds, rounded toward zero. For up to
    /// ±9.2 × 10^9 samples (about 53 hours at 48 kHz); the 48 kHz form reaches 16 000 times further.
    public static func nanoseconds(samples: Int64, rate: Int) -> Int64 {
        samples * nanosecondsPerSecond / Int64(rate)
    }

    /// Number of samples at `rate` Hz in `nanoseconds`, rounded toward zero.
    public static func samples(nanoseconds: Int64, rate: Int) -> Int64 {
        nanoseconds * Int64(rate) / nanosecondsPerSecond
    }

    /// Nanoseconds in a standard-library `Duration`, rounded toward zero; a negative
    /// duration counts as zero.
    public static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        let attosecondsPerNanosecond: Int64 = 1_000_000_000
        return UInt64(max(seconds, 0)) * UInt64(nanosecondsPerSecond) + UInt64(max(attoseconds, 0) / attosecondsPerNanosecond)
    }

    /// Sample position at `rate` Hz of the instant `nanoseconds`, rounded down and taken
    /// modulo 2^32 like an RTP timestamp; whole seconds and the rest are converted apart,
    /// so that it never overflows however long the clock has run.
    public static func wrappingTimestamp(nanoseconds: UInt64, rate: Int) -> UInt32 {
        let rate = UInt64(rate)
        let second = UInt64(nanosecondsPerSecond)
        let wholeSeconds = nanoseconds / second
        let remainder = nanoseconds % second
        return UInt32(truncatingIfNeeded: wholeSeconds &* rate &+ remainder * rate / second)
    }
}
