import IntercomCore
import Testing

struct PlayoutRateControllerTests {
    struct Row: CustomTestStringConvertible {
        let name: String
        let delayError: Int64
        let seconds: Int
        let expected: ClosedRange<Double>
        var testDescription: String { name }
    }

    @Test(arguments: [
        Row(name: "on target stays at 1", delayError: 0, seconds: 60, expected: 1...1),
        Row(name: "an error within the dead band stays at 1", delayError: 900_000, seconds: 60, expected: 1...1),
        Row(name: "a deficit within the dead band stays at 1", delayError: -900_000, seconds: 60, expected: 1...1),
        Row(name: "too much delay plays faster", delayError: 10_000_000, seconds: 1, expected: 1.000_2...1.001),
        Row(name: "too little delay plays slower", delayError: -10_000_000, seconds: 1, expected: 0.999...0.999_8),
        Row(name: "a large excess is limited to +0.5 %", delayError: 500_000_000, seconds: 60, expected: 1.005...1.005),
        Row(name: "a large deficit is limited to -0.5 %", delayError: -500_000_000, seconds: 60, expected: 0.995...0.995),
    ])
    func respondsToTheDelayError(_ row: Row) {
        var controller = PlayoutRateController()
        for tick in 0...(row.seconds * 100) {
            controller.update(delayError: row.delayError, now: UInt64(tick) * 10_000_000)
        }
        #expect(row.expected.contains(controller.ratio), "ratio \(controller.ratio)")
    }

    @Test func recoversPromptlyAfterLongSaturation() {
        var controller = PlayoutRateController()
        var now: UInt64 = 0
        for _ in 0..<60_000 {
            controller.update(delayError: 500_000_000, now: now)
            now += 10_000_000
        }
        // Once the error is gone, a wound-up integral would keep the ratio pinned for minutes.
        for _ in 0..<3_000 {
            controller.update(delayError: 0, now: now)
            now += 10_000_000
        }
        #expect(abs(controller.ratio - 1) < 0.000_1, "ratio \(controller.ratio)")
    }
}
