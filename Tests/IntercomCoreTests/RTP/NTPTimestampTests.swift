import IntercomCore
import Testing

@Suite("NTP timestamps")
struct NTPTimestampTests {
    @Test func convertsUnixTime() {
        #expect(NTPTimestamp(unixNanoseconds: 0) == NTPTimestamp(seconds: 2_208_988_800, fraction: 0))
        #expect(NTPTimestamp(unixNanoseconds: 1_500_000_000) == NTPTimestamp(seconds: 2_208_988_801, fraction: 0x8000_0000))
        #expect(NTPTimestamp(unixNanoseconds: 250_000_000).fraction == 0x4000_0000)
    }

    @Test func wrapsIntoEraOneAfter2036() {
        // 2036-02-07T06:28:16Z is NTP second 2^32.
        let eraOneStart = (UInt64(1) << 32 - NTPTimestamp.unixEpochOffsetSeconds) * 1_000_000_000
        #expect(NTPTimestamp(unixNanoseconds: eraOneStart + 1_000_000_000).seconds == 1)
    }

    @Test func exposesTheMiddleThirtyTwoBits() {
        let timestamp = NTPTimestamp(seconds: 0x1234_5678, fraction: 0x9ABC_DEF0)
        #expect(timestamp.shortFormat == 0x5678_9ABC)
        #expect(timestamp.rawValue == 0x1234_5678_9ABC_DEF0)
        #expect(NTPTimestamp(rawValue: timestamp.rawValue) == timestamp)
    }

    @Test func convertsShortFormatDurations() {
        #expect(NTPShortFormat.fromNanoseconds(1_500_000_000) == 0x0001_8000)
        #expect(NTPShortFormat.toNanoseconds(0x0001_8000) == 1_500_000_000)
        #expect(NTPShortFormat.fromNanoseconds(UInt64(70_000) * 1_000_000_000) == .max)
    }
}
