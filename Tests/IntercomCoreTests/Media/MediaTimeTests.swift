import IntercomCore
import Testing

/// The conversions of `MediaTime`: exact where 48 kHz and the nanosecond divide evenly
/// (every multiple of 3 samples, every whole millisecond), toward zero elsewhere.
@Suite struct MediaTimeTests {
    /// Samples at 48 kHz and their exact duration: both directions give back the other.
    @Test(arguments: [
        (Int64(0), Int64(0)),
        (3, 62_500),  // the smallest exact pair
        (48, 1_000_000),  // 1 ms
        (480, 10_000_000),  // a 10 ms frame
        (960, 20_000_000),  // a 20 ms frame
        (5_760, 120_000_000),  // Opus' longest packet
        (48_000, 1_000_000_000),  // 1 s
        (-480, -10_000_000),  // a timestamp behind the reference
        // Three whole RTP timestamp cycles: 62 500 / 3 keeps the product in range where the
        // any-rate form (samples × 10^9 / rate) would overflow, so the 48 kHz form is the one
        // for timestamps.
        (Int64(UInt32.max) * 3, Int64(UInt32.max) * 62_500),
    ])
    func exactRoundTripsAt48kHz(samples: Int64, nanoseconds: Int64) {
        #expect(MediaTime.nanoseconds(samples: samples) == nanoseconds)
        #expect(MediaTime.samples(nanoseconds: nanoseconds) == samples)
        #expect(MediaTime.samples(nanoseconds: MediaTime.nanoseconds(samples: samples)) == samples)
        #expect(MediaTime.nanoseconds(samples: Double(samples)) == Double(nanoseconds))
        if samples.magnitude < Int64.max / MediaTime.nanosecondsPerSecond {
            #expect(MediaTime.nanoseconds(samples: samples, rate: VoiceFormat.sampleRate) == nanoseconds)
            #expect(MediaTime.samples(nanoseconds: nanoseconds, rate: VoiceFormat.sampleRate) == samples)
        }
    }

    /// Values between two samples round toward zero, in both signs.
    @Test(arguments: [
        (Int64(1), Int64(20_833)),  // 20 833.3 ns
        (2, 41_666),  // 41 666.6 ns: down, not to the nearest
        (-1, -20_833),
        (-2, -41_666),
    ])
    func samplesToNanosecondsRoundTowardZero(samples: Int64, nanoseconds: Int64) {
        #expect(MediaTime.nanoseconds(samples: samples) == nanoseconds)
        #expect(MediaTime.nanoseconds(samples: samples, rate: 48_000) == nanoseconds)
    }

    @Test(arguments: [
        (Int64(20_833), Int64(0)),  // just short of one sample
        (20_834, 1),
        (62_499, 2),  // just short of three
        (999_999, 47),  // just short of 1 ms
        (-20_834, -1),
        (-62_499, -2),
    ])
    func nanosecondsToSamplesRoundTowardZero(nanoseconds: Int64, samples: Int64) {
        #expect(MediaTime.samples(nanoseconds: nanoseconds) == samples)
        #expect(MediaTime.samples(nanoseconds: nanoseconds, rate: 48_000) == samples)
    }

    /// Whole milliseconds are whole samples at 48 kHz, and back.
    @Test(arguments: [(0, 0), (1, 48), (5, 240), (10, 480), (20, 960), (120, 5_760), (1_000, 48_000)])
    func millisecondsToSamplesAt48kHz(milliseconds: Int, samples: Int) {
        #expect(VoiceFormat.samples(milliseconds: milliseconds) == samples)
        #expect(MediaTime.samples(milliseconds: milliseconds) == samples)
        #expect(MediaTime.samples(milliseconds: milliseconds, rate: VoiceFormat.sampleRate) == samples)
        #expect(MediaTime.milliseconds(samples: Double(samples)) == Double(milliseconds))
        #expect(MediaTime.milliseconds(frames: samples, rate: VoiceFormat.sampleRate) == milliseconds)
        #expect(MediaTime.nanoseconds(samples: Int64(samples)) == Int64(milliseconds) * MediaTime.nanosecondsPerMillisecond)
    }

    /// Device rates that are not a whole number of kHz: durations round down.
    @Test(arguments: [
        (441, 44_100, UInt64(10_000_000)),
        (1, 44_100, 22_675),  // 22 675.7 ns
        (1_024, 44_100, 23_219_954),  // a period, 23 219 954.6 ns
        (480, 48_000, 10_000_000),
        (160, 16_000, 10_000_000),
        (0, 44_100, 0),
    ])
    func framesAtADeviceRateRoundDown(frames: Int, rate: Int, nanoseconds: UInt64) {
        #expect(MediaTime.nanoseconds(frames: frames, rate: rate) == nanoseconds)
    }

    /// Sample counts between rates (resampler buffers), rounded toward zero.
    @Test(arguments: [
        (480, 48_000, 44_100, 441),
        (441, 44_100, 48_000, 480),
        (1_024, 44_100, 48_000, 1_114),  // 1 114.5
        (480, 48_000, 48_000, 480),
        (480, 48_000, 16_000, 160),
    ])
    func samplesBetweenRates(count: Int, from: Int, to: Int, expected: Int) {
        #expect(MediaTime.samples(count, from: from, to: to) == expected)
    }

    @Test(arguments: [(10, 44_100, 441), (1, 44_100, 44), (3, 22_050, 66)])
    func millisecondsAtADeviceRateRoundTowardZero(milliseconds: Int, rate: Int, samples: Int) {
        #expect(MediaTime.samples(milliseconds: milliseconds, rate: rate) == samples)
    }

    /// RTP timestamps of an instant: whole seconds and the rest apart, modulo 2^32.
    @Test(arguments: [
        (UInt64(0), UInt32(0)),
        (1_000_000_000, 48_000),
        (10_000_000, 480),
        (20_833, 0),  // rounded down
        (20_834, 1),
        // After 2^32 / 48 000 s ≈ 24.9 h the timestamp wraps.
        (UInt64(UInt32.max) / 48_000 * 1_000_000_000 + 1_000_000_000, UInt32(truncatingIfNeeded: (UInt64(UInt32.max) / 48_000 + 1) * 48_000)),
        // A clock that has run for centuries does not overflow.
        (UInt64.max, UInt32(truncatingIfNeeded: (UInt64.max / 1_000_000_000) &* 48_000 &+ (UInt64.max % 1_000_000_000) * 48_000 / 1_000_000_000)),
    ])
    func wrappingTimestamps(nanoseconds: UInt64, timestamp: UInt32) {
        #expect(MediaTime.wrappingTimestamp(nanoseconds: nanoseconds, rate: VoiceFormat.sampleRate) == timestamp)
    }

    /// Standard-library durations: attoseconds below a nanosecond are dropped, negatives are zero.
    @Test(arguments: [
        (Duration.zero, UInt64(0)),
        (.milliseconds(10), 10_000_000),
        (.seconds(3) + .nanoseconds(7), 3_000_000_007),
        (.nanoseconds(5) + .init(secondsComponent: 0, attosecondsComponent: 999_999_999), 5),
        (.milliseconds(-10), 0),
    ])
    func durations(duration: Duration, nanoseconds: UInt64) {
        #expect(MediaTime.nanoseconds(duration) == nanoseconds)
    }

    /// Report units: plain division, no rounding.
    @Test(arguments: [(0.0, 0.0, 0.0), (1_000_000, 1, 0.001), (20_833.5, 0.0208335, 0.0000208335), (-2_500_000_000, -2_500, -2.5)])
    func reportUnits(nanoseconds: Double, milliseconds: Double, seconds: Double) {
        #expect(MediaTime.milliseconds(nanoseconds: nanoseconds) == milliseconds)
        #expect(MediaTime.seconds(nanoseconds: nanoseconds) == seconds)
    }

    @Test func theVoiceFormatIs48kHzMono() {
        #expect(VoiceFormat.sampleRate == 48_000)
        #expect(VoiceFormat.channels == 1)
        #expect(VoiceFormat.samplesPerMillisecond == 48)
        #expect(MediaTime.nanosecondsPerSecond == 1_000_000_000)
    }
}
