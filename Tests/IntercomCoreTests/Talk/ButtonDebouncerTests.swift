import IntercomCore
import Testing

@Suite struct ButtonDebouncerTests {
    /// Levels sampled every millisecond, as a string ("1" pressed), and the events expected
    /// with a 5 ms settle time, keyed by the sample index at which they come.
    static let rows: [(name: String, levels: String, events: [Int: PushToTalk.KeyEvent])] = [
        ("clean press and release", "0000011111111111110000000000", [10: .press, 23: .release]),
        ("bouncing press", "0001010111111111111", [12: .press]),
        ("a glitch shorter than the settle time is ignored", "0000110000000111100000", [:]),
        ("bouncing release", "11111111111010100000000", [5: .press, 20: .release]),
    ]

    @Test(arguments: rows)
    func reportsSettledChangesOnly(row: (name: String, levels: String, events: [Int: PushToTalk.KeyEvent])) {
        var debouncer = ButtonDebouncer(settleNanoseconds: 5_000_000)
        var events: [Int: PushToTalk.KeyEvent] = [:]
        for (index, level) in row.levels.enumerated() {
            if let event = debouncer.sample(pressed: level == "1", now: UInt64(index) * 1_000_000) { events[index] = event }
        }
        #expect(events == row.events, "\(row.name)")
    }
}
