import IntercomCore
import Testing

@Suite struct EchoReferenceTimelineTests {
    /// Frames whose samples are their own timeline positions, so tests can read where a
    /// reference came from. Frame j plays at j × 10 ms (+ an offset).
    static func frame(_ index: Int) -> [Int16] { (0..<480).map { Int16(truncatingIfNeeded: index * 480 + $0) } }
    static let period: UInt64 = 10_000_000
    static let base: UInt64 = 1_000_000_000

    /// Each row: the order in which the two threads act in each period (P = playback
    /// reports a frame, C = capture asks for one) and jitter on their timestamps. Whatever
    /// the order and jitter, consecutive references must be consecutive samples.
    static let rows: [(name: String, pattern: [String], jitter: [Int64])] = [
        ("playback first", ["PC"], [0]),
        ("capture first", ["CP"], [0]),
        ("alternating order", ["PC", "CP", "CP", "PC"], [0]),
        ("timestamp noise of ±2 ms", ["PC", "CP"], [0, 2_000_000, -2_000_000, 1_000_000, -1_500_000]),
    ]

    @Test(arguments: rows)
    func referenceStaysContinuousWhateverTheThreadOrder(row: (name: String, pattern: [String], jitter: [Int64])) {
        var timeline = EchoReferenceTimeline(frameSamples: 480)
        var played = 0
        var references: [[Int16]] = []
        for period in 0..<300 {
            let jitter = row.jitter[period % row.jitter.count]
            for action in row.pattern[period % row.pattern.count] {
                if action == "P" {
                    timeline.played(Self.frame(played), at: Self.base + UInt64(played) * Self.period)
                    played += 1
                } else {
                    // The microphone frame captured one period ago.
                    let captured = Int64(Self.base) + Int64(period) * Int64(Self.period) - Int64(Self.period) + jitter
                    references.append(timeline.reference(capturedAt: UInt64(captured)))
                }
            }
        }
        let settled = references.dropFirst(5)
        for (previous, next) in zip(settled, settled.dropFirst()) {
            #expect(Int(next[0]) &- Int(previous[479]) == 1 || (previous[479] == 32767 && next[0] == -32768), "\(row.name)")
        }
        #expect(timeline.resyncs == 0, "\(row.name)")
        // The reference is what was played the safety margin before the capture time.
        let last = references.last!
        let capturedAt = 299 - 1
        let expectedStart = (capturedAt * 480 - timeline.safetyMarginSamples)
        #expect(Int(UInt16(bitPattern: last[0])) == expectedStart & 0xFFFF, "\(row.name)")
    }

    @Test func aPauseInPlaybackIsSilenceAndTheReadPositionFollows() {
        var timeline = EchoReferenceTimeline(frameSamples: 480)
        for j in 0..<50 { timeline.played(Self.frame(j), at: Self.base + UInt64(j) * Self.period) }
        // Playback stalls for 200 ms, then continues on the wall clock.
        for j in 50..<100 { timeline.played(Self.frame(j), at: Self.base + UInt64(j + 20) * Self.period) }
        let duringGap = timeline.reference(capturedAt: Self.base + 55 * Self.period)
        #expect(duringGap.allSatisfy { $0 == 0 })
        var after: [Int16] = []
        for period in UInt64(56)...80 { after = timeline.reference(capturedAt: Self.base + period * Self.period) }
        #expect(after.contains { $0 != 0 })
        #expect(timeline.resyncs == 0)
    }

    /// The microphone's reported capture time of frame `period` (one period before it is read),
    /// moved by `offset` nanoseconds.
    static func captured(_ period: Int, offset: Int64 = 0) -> UInt64 {
        UInt64(Int64(base) + Int64(period - 1) * Int64(Self.period) + offset)
    }

    @Test func aCaptureTimeAPeriodOffForAFewFramesDoesNotMoveTheReference() {
        var timeline = EchoReferenceTimeline(frameSamples: 480)
        var references: [[Int16]] = []
        for period in 0..<200 {
            timeline.played(Self.frame(period), at: Self.base + UInt64(period) * Self.period)
            // As ALSA's pulse plugin reported with 10 ms periods: 9 ms late for four frames, twice.
            let off = (50..<54).contains(period) || (120..<124).contains(period)
            references.append(timeline.reference(capturedAt: Self.captured(period, offset: off ? 9_000_000 : 0)))
        }
        for (previous, next) in zip(references.dropFirst(2), references.dropFirst(3)) {
            #expect(Int(UInt16(bitPattern: next[0])) == (Int(UInt16(bitPattern: previous[479])) + 1) & 0xFFFF)
        }
        #expect(timeline.resyncs == 0)
    }

    @Test func aLastingMoveOfTheCaptureTimeIsFollowedAfterTheResyncDelay() {
        var timeline = EchoReferenceTimeline(frameSamples: 480)
        let move: Int64 = 20_000_000
        var firstFollowing: Int?
        for period in 0..<100 {
            timeline.played(Self.frame(period), at: Self.base + UInt64(period) * Self.period)
            let captured = Self.captured(period, offset: period >= 30 ? move : 0)
            let reference = timeline.reference(capturedAt: captured)
            // Following: the reference is what played the safety margin before the (moved) capture time.
            let expected = Int((Int64(captured) - Int64(Self.base)) * 3 / 62_500) - timeline.safetyMarginSamples
            if firstFollowing == nil, period >= 30, Int(UInt16(bitPattern: reference[0])) == expected & 0xFFFF {
                firstFollowing = period
            }
        }
        #expect(timeline.resyncs == 1)
        // Off from frame 30 on; re-synced once it has been off for 100 ms (ten 10 ms frames).
        #expect(firstFollowing == 40)
    }

    /// Both devices on one clock that runs fast or slow against the monotonic clock, as a sound
    /// card's crystal does: the echo stays where it was in the card's samples, so the reference
    /// must never jump, however far the timestamps drift over a minute.
    @Test(arguments: [500.0, -500.0])
    func theDevicesClockDriftingAgainstTheMonotonicClockNeverMovesTheReference(ppm: Double) {
        var timeline = EchoReferenceTimeline(frameSamples: 480)
        let devicePeriod = Double(Self.period) / (1 + ppm / 1_000_000)
        var references: [[Int16]] = []
        for period in 0..<6_000 {
            timeline.played(Self.frame(period), at: Self.base + UInt64(Double(period) * devicePeriod))
            let captured = UInt64(Int64(Self.base) + Int64(Double(period - 1) * devicePeriod))
            references.append(timeline.reference(capturedAt: captured))
        }
        #expect(timeline.resyncs == 0)
        let settled = references.dropFirst(2)
        let jumps = zip(settled, settled.dropFirst()).filter {
            Int(UInt16(bitPattern: $1[0])) != (Int(UInt16(bitPattern: $0[479])) + 1) & 0xFFFF
        }
        #expect(jumps.isEmpty, "\(jumps.count) jumps")
    }

    /// Playback times reported several milliseconds late for three seconds (a step, not
    /// drift), on top of capture times a millisecond early: neither is a move of the devices, so
    /// the reference stays where it is.
    @Test func aStepInThePlaybackTimesIsNotTakenForTheCardsClock() {
        var timeline = EchoReferenceTimeline(frameSamples: 480)
        for period in 0..<600 {
            let late: UInt64 = (100..<400).contains(period) ? 7_500_000 : 0
            timeline.played(Self.frame(period), at: Self.base + UInt64(period) * Self.period + late)
            _ = timeline.reference(capturedAt: Self.captured(period, offset: period >= 50 ? -1_000_000 : 0))
        }
        #expect(timeline.resyncs == 0)
    }

    @Test func nothingPlayedGivesSilence() {
        var timeline = EchoReferenceTimeline(frameSamples: 480)
        #expect(timeline.reference(capturedAt: Self.base).allSatisfy { $0 == 0 })
    }
}
