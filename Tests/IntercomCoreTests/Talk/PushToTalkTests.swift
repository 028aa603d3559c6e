import IntercomCore
import Testing

@Suite struct PushToTalkTests {
    static let ms: UInt64 = 1_000_000

    /// Plays key events (at their times in ms) and reports whether the key counts as held at
    /// each probe time.
    static func run(_ style: PushToTalk.Style, events: [(UInt64, PushToTalk.KeyEvent)], probes: [UInt64], limit: UInt64 = 120_000) -> [Bool] {
        var ptt = PushToTalk(style: style, maximumTransmitNanoseconds: limit * ms)
        var pending = events.sorted { $0.0 < $1.0 }[...]
        var t: UInt64 = 0
        return probes.map { probe in
            while t <= probe {
                while let next = pending.first, next.0 <= t {
                    ptt.handle(next.1, now: 1_000 * ms + next.0 * ms)
                    pending = pending.dropFirst()
                }
                ptt.tick(now: 1_000 * ms + t * ms)
                t += 5
            }
            return ptt.isTransmitting
        }
    }

    /// A key held from `down` to `up` on a keyboard with this initial delay and repeat interval,
    /// as a plain terminal reports it: a press, then repeated presses.
    static func held(down: UInt64, up: UInt64, initialDelay: UInt64, interval: UInt64) -> [(UInt64, PushToTalk.KeyEvent)] {
        var events: [(UInt64, PushToTalk.KeyEvent)] = [(down, .press)]
        var t = down + initialDelay
        while t < up {
            events.append((t, .press))
            t += interval
        }
        return events
    }

    @Test func exactPressAndRelease() {
        let states = Self.run(.exact, events: [(100, .press), (150, .repeat), (900, .release)], probes: [50, 100, 500, 899, 905])
        #expect(states == [false, true, true, true, false])
    }

    /// Keyboards seen in the wild: initial delays 250–600 ms, repeat rates 10–40 per second.
    static let keyboards: [(initialDelay: UInt64, interval: UInt64)] = [(250, 33), (300, 25), (500, 40), (600, 100), (660, 30)]

    @Test(arguments: keyboards)
    func autoRepeatHoldTransmitsFromThePressUntilTheRepeatsStop(keyboard: (initialDelay: UInt64, interval: UInt64)) {
        let style = PushToTalk.Style.autoRepeat(initialDelayTimeout: 700 * Self.ms, repeatTimeout: 150 * Self.ms)
        let events = Self.held(down: 100, up: 2_100, initialDelay: keyboard.initialDelay, interval: keyboard.interval)
        let lastRepeat = events.last!.0
        let states = Self.run(style, events: events, probes: [99, 101, 100 + keyboard.initialDelay - 5, 1_500, lastRepeat + 2, lastRepeat + 160])
        // On from the first press, through the initial delay, until one timeout after the last repeat.
        #expect(states == [false, true, true, true, true, false], "keyboard \(keyboard)")
    }

    @Test func aTapWithoutRepeatsStopsAfterTheInitialTimeout() {
        let style = PushToTalk.Style.autoRepeat(initialDelayTimeout: 650 * Self.ms, repeatTimeout: 150 * Self.ms)
        let states = Self.run(style, events: [(100, .press)], probes: [100, 700, 760])
        #expect(states == [true, true, false])
    }

    @Test func latchTapsStartAndStopAndRepeatsAreNotTaps() {
        let style = PushToTalk.Style.defaultLatch
        // A tap at 100 held long enough to auto-repeat, then a second tap at 3000.
        var events = Self.held(down: 100, up: 900, initialDelay: 400, interval: 30)
        events.append((3_000, .press))
        let states = Self.run(style, events: events, probes: [50, 150, 800, 2_000, 3_010])
        #expect(states == [false, true, true, true, false])
    }

    @Test(arguments: [PushToTalk.Style.exact, .defaultAutoRepeat, .defaultLatch])
    func aStuckKeyIsCutOffAndMustBeLetGoFirst(style: PushToTalk.Style) {
        // The key (or latch) stays on for 5 s with a 2 s limit.
        var events: [(UInt64, PushToTalk.KeyEvent)]
        switch style {
        case .exact: events = [(0, .press), (5_000, .release), (6_000, .press)]
        case .autoRepeat: events = Self.held(down: 0, up: 5_000, initialDelay: 300, interval: 30) + [(6_000, .press)]
        case .latch: events = [(0, .press), (5_000, .press), (6_000, .press)]
        }
        let states = Self.run(style, events: events, probes: [1_000, 2_010, 4_000, 6_010], limit: 2_000)
        #expect(states == [true, false, false, true], "\(style)")
    }
}
