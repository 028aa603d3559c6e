import IntercomCore
import Testing

struct StreamMixerTests {
    /// One sender feeding the mixer: its SSRC, the level its frames decode to, and when it talks.
    struct Talker {
        let ssrc: UInt32
        let level: Float
        var start: UInt64 = 0
        var duration: UInt64 = 3 * second
        var firstSequenceNumber: UInt16 = 0
        var firstTimestamp: UInt32 = 0
    }

    /// Runs the mixer in 10 ms pulls until `end`; packets arrive 20 ms after sending.
    static func run(_ mixer: StreamMixer, _ talkers: [Talker], until end: UInt64, afterPull: (_ now: UInt64, _ output: [Float]) -> Void) {
        var arrivals: [(arrival: UInt64, ssrc: UInt32, packet: SentPacket)] = []
        for talker in talkers {
            let sender = FakeSender(firstSequenceNumber: talker.firstSequenceNumber, firstTimestamp: talker.firstTimestamp)
            for packet in sender.packets(slots: Int(talker.duration / sender.frameDuration)) {
                arrivals.append((talker.start + packet.sendTime + 20 * millisecond, talker.ssrc, packet))
            }
        }
        arrivals.sort { $0.arrival < $1.arrival }
        var next = 0
        var now: UInt64 = 0
        while now < end {
            while next < arrivals.count, arrivals[next].arrival <= now {
                let (arrival, ssrc, packet) = arrivals[next]
                mixer.insert(
                    ssrc: ssrc, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                    marker: packet.marker, payload: packet.payload, arrivalTime: arrival
                )
                next += 1
            }
            let output = mixer.pull(count: 480, now: now)
            #expect(output.count == 480)
            afterPull(now, output)
            now += 10 * millisecond
        }
    }

    static func makeMixer(_ talkers: [Talker], idleTimeout: UInt64 = 5 * second) -> StreamMixer {
        StreamMixer(idleTimeout: idleTimeout) { ssrc in
            let level = talkers.first { $0.ssrc == ssrc }!.level
            return (ConstantLevelDecoder(level: level), LinearRateAdjuster())
        }
    }

    @Test func sumsStreamsWithTheirGains() {
        let talkers = [Talker(ssrc: 1, level: 0.2), Talker(ssrc: 2, level: 0.3, firstSequenceNumber: 9_000, firstTimestamp: 77)]
        let mixer = Self.makeMixer(talkers)
        var steadyBeforeGain: [Float] = []
        var steadyAfterGain: [Float] = []
        var levelsBeforeGain: [Float] = []
        Self.run(mixer, talkers, until: 3 * second) { now, output in
            if now == 2 * second {
                levelsBeforeGain = mixer.streamStatistics.map(\.level)
                mixer.setGain(2, for: 1)
            }
            if now >= 1 * second, now < 2 * second { steadyBeforeGain += output }
            if now > 2 * second, now < 2_900 * millisecond { steadyAfterGain += output }
        }
        #expect(steadyBeforeGain.allSatisfy { abs($0 - 0.5) < 1e-6 })
        #expect(steadyAfterGain.allSatisfy { abs($0 - 0.7) < 1e-6 })
        #expect(mixer.ssrcs == [1, 2])
        #expect(zip(levelsBeforeGain, [0.2, 0.3]).allSatisfy { abs($0 - $1) < 1e-6 })
        #expect(mixer.streamStatistics.map(\.statistics.lost) == [0, 0])
    }

    /// Louder sums come out louder, but never at or beyond full scale.
    @Test func limitsLoudMixesSoftlyInsideFullScale() {
        let rows: [[Float]] = [[0.5, 0.45], [0.9, 0.9], [1, 1], [0.7, 0.7, 0.7], [1, 1, 1, 1]]
        var previousSteadyLevel: Float = 0.8
        for levels in rows {
            let talkers = levels.enumerated().map { Talker(ssrc: UInt32($0.offset + 1), level: $0.element) }
            let mixer = Self.makeMixer(talkers)
            var peak: Float = 0
            var steady: [Float] = []
            Self.run(mixer, talkers, until: 3 * second) { now, output in
                peak = max(peak, output.map(abs).max()!)
                if now >= 1 * second, now < 2 * second { steady += output }
            }
            #expect(peak < 1, "levels \(levels): peak \(peak)")
            let steadyLevel = steady.max()!
            #expect(steady.min()! > steadyLevel - 1e-4, "levels \(levels): the gain must not pump on a steady signal")
            #expect(steadyLevel > previousSteadyLevel, "levels \(levels): \(steadyLevel) is not louder than the quieter mix")
            previousSteadyLevel = steadyLevel
        }
    }

    @Test func passesMixesBelowTheKneeUntouched() {
        let talkers = [Talker(ssrc: 1, level: 0.45), Talker(ssrc: 2, level: -0.3), Talker(ssrc: 3, level: 0.6)]
        let mixer = Self.makeMixer(talkers)
        var steady: [Float] = []
        Self.run(mixer, talkers, until: 2 * second) { now, output in
            if now >= 1 * second { steady += output }
        }
        #expect(steady.allSatisfy { abs($0 - 0.75) < 1e-6 })
    }

    @Test func aRestartedPeerPlaysUnderItsNewSSRCAndTheOldStreamIsRemoved() {
        let before = Talker(ssrc: 0xA, level: 0.25, duration: 2 * second, firstSequenceNumber: 1_000, firstTimestamp: 5_000)
        let after = Talker(ssrc: 0xB, level: 0.5, start: 2_500 * millisecond, duration: 2_400 * millisecond, firstSequenceNumber: 40_000, firstTimestamp: 3_000_000_000)
        let mixer = Self.makeMixer([before, after], idleTimeout: 1 * second)
        var tables: [UInt64: [UInt32]] = [:]
        var outputs: [UInt64: [Float]] = [:]
        Self.run(mixer, [before, after], until: 5 * second) { now, output in
            tables[now] = mixer.ssrcs
            outputs[now] = output
        }
        #expect(tables[1_500 * millisecond] == [0xA])
        #expect(outputs[1_500 * millisecond]!.allSatisfy { abs($0 - 0.25) < 1e-6 })
        #expect(tables[2_600 * millisecond] == [0xA, 0xB])
        // The old stream's last packet arrived at 2.01 s: it goes once idle for 1 s.
        #expect(tables[3_000 * millisecond] == [0xA, 0xB])
        #expect(tables[3_100 * millisecond] == [0xB])
        #expect(outputs[4 * second]!.allSatisfy { abs($0 - 0.5) < 1e-6 })
        let statistics = mixer.streamStatistics.last!.statistics
        #expect(statistics.lost == 0 && statistics.late == 0 && statistics.received == 240)
        // The old stream's figures stay for the call's totals.
        let ended = mixer.streamStatistics.first!
        #expect(ended.ssrc == 0xA && ended.statistics.received == 200 && ended.level == 0)
    }

    /// A page is short and its stream often ends (its sender silent, or gone) before anyone
    /// reads the figures: the ended stream still says it was a page, and a stream of the same
    /// sender that follows does not inherit it.
    @Test func anEndedPageStillSaysItWasAPage() {
        let page = Talker(ssrc: 0xA, level: 0.25)
        let mixer = Self.makeMixer([page], idleTimeout: 1 * second)
        let sender = FakeSender(firstSequenceNumber: 7, firstTimestamp: 0)
        for packet in sender.packets(slots: 50) {
            mixer.insert(
                ssrc: 0xA, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp, marker: packet.marker,
                payload: packet.payload, arrivalTime: packet.sendTime, isPage: true
            )
            _ = mixer.pull(count: 480, now: packet.sendTime)
        }
        var pages: [(UInt32, Bool)] = []
        mixer.forEachStream { ssrc, _, _, _, isPage in pages.append((ssrc, isPage)) }
        #expect(pages.map(\.1) == [true])
        mixer.remove(ssrc: 0xA)
        mixer.insert(ssrc: 0xA, sequenceNumber: 200, timestamp: 96_000, marker: true, payload: [1], arrivalTime: 5 * second)
        pages = []
        mixer.forEachStream { ssrc, _, _, _, isPage in pages.append((ssrc, isPage)) }
        #expect(pages.map(\.0) == [0xA, 0xA] && pages.map(\.1) == [true, false])
    }
}
