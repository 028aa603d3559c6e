import IntercomCore
import Testing

/// 10 s of a steady network (15 ms), 60 s of jitter (30 ± 15 ms), then 90 s steady again; and
/// the soak's promise, that the delay is back within seconds once the link is clean.
struct JitterAdaptationTests {
    static let steadyDelay = 15 * millisecond
    static let onset = 1_000
    static let calm = 7_000
    static let frames = 16_000

    @Test func targetGrowsAsLatenessRecursAndComesBackOnceTheLinkIsCalm() {
        let packets = FakeSender().packets(slots: Self.frames)
        let clock = ReceiverClock()
        let steady = NetworkConditions(baseDelay: Self.steadyDelay, protectedEnds: 0)
        let jittery = NetworkConditions(baseDelay: Self.steadyDelay, jitter: 30 * millisecond, protectedEnds: 0)
        let phases = [
            NetworkRun(packets: Array(packets[..<Self.onset]), conditions: steady, clock: clock, seed: 1),
            NetworkRun(packets: Array(packets[Self.onset..<Self.calm]), conditions: jittery, clock: clock, seed: 2),
            NetworkRun(packets: Array(packets[Self.calm...]), conditions: steady, clock: clock, seed: 3),
        ]
        let deliveries = phases.flatMap(\.deliveries).sorted { ($0.arrival, $0.packet.index) < ($1.arrival, $1.packet.index) }
        let configuration = JitterBufferConfiguration()
        let (stream, decoder) = makeRecordingStream(configuration)

        var targetBeforeOnset: UInt64 = 0
        var growthChecked = 0
        var jitteryDelays: [UInt64] = []
        var targetAtSecond: [Int: UInt64] = [:]
        var delayAtSecond: [Int: UInt64] = [:]
        var lateAtSecond: [Int: Int] = [:]
        var highestTarget: UInt64 = 0
        let simulation = PlayoutSimulation()
        simulation.run(
            stream, deliveries: deliveries, pulls: Self.frames + 20,
            afterInsert: { delivery in
                let index = delivery.packet.index
                let target = stream.statistics.targetDelay
                highestTarget = max(highestTarget, target)
                if index == Self.onset - 1 { targetBeforeOnset = target }
                // Late packets are absorbed as soon as lateness recurs: within the first 20 jittery
                // packets, the target covers every delay but the two worst seen so far (a lone late
                // burst is concealed rather than followed), allowing for 5 % of decay.
                if index >= Self.onset, index < Self.onset + 20 {
                    let relativeDelay = delivery.arrival - clock.reading(atTrueTime: delivery.packet.sendTime) - Self.steadyDelay
                    jitteryDelays.append(relativeDelay)
                    if jitteryDelays.count >= 3 {
                        let thirdWorst = jitteryDelays.sorted(by: >)[2]
                        let wanted = min(configuration.maximumDelay, thirdWorst * 95 / 100 + 20 * millisecond)
                        #expect(target >= wanted, "packet \(index): target \(target), third worst relative delay \(thirdWorst)")
                        growthChecked += 1
                    }
                }
            },
            afterPull: { pull in
                guard pull.index % 100 == 0 else { return }
                let statistics = stream.statistics
                targetAtSecond[pull.index / 100] = statistics.targetDelay
                delayAtSecond[pull.index / 100] = statistics.currentDelay
                lateAtSecond[pull.index / 100] = statistics.late
            }
        )
        let onsetSecond = Self.onset / 100
        let calmSecond = Self.calm / 100
        #expect(growthChecked == 18)
        #expect(targetBeforeOnset <= 22 * millisecond)
        #expect(highestTarget <= configuration.maximumDelay)
        // Stretched up to the new target within two seconds.
        #expect(delayAtSecond[onsetSecond + 2]! + 10 * millisecond >= targetAtSecond[onsetSecond + 2]!)
        // After adapting, hardly any packet comes too late.
        let lateAfterAdapting = lateAtSecond[calmSecond]! - lateAtSecond[onsetSecond + 2]!
        #expect(Double(lateAfterAdapting) / Double((calmSecond - onsetSecond - 2) * 100) < 0.005, "late \(lateAfterAdapting)")
        // Jitter stops: the target holds for a moment (jitter often pauses and comes back),
        // then follows the calm link down within seconds.
        let jitteryTarget = targetAtSecond[calmSecond]!
        #expect(jitteryTarget >= 40 * millisecond)
        #expect(targetAtSecond[calmSecond + 1]! >= jitteryTarget * 9 / 10)
        #expect(targetAtSecond[calmSecond + 5]! <= targetBeforeOnset + 10 * millisecond, "\(targetAtSecond.sorted { $0.key < $1.key })")
        #expect(targetAtSecond[calmSecond + 60]! <= targetBeforeOnset + 2 * millisecond)
        // The delay itself follows the target down, without dropping speech.
        let finalSecond = Self.frames / 100
        let finalError = Int64(delayAtSecond[finalSecond]!) - Int64(targetAtSecond[finalSecond]!)
        #expect(abs(finalError) <= Int64(10 * millisecond), "delay \(delayAtSecond[finalSecond]!) target \(targetAtSecond[finalSecond]!)")
        #expect(decoder.log.decodedIndices.count == Self.frames - stream.statistics.late)
        #expect(zip(decoder.log.playedIndices, decoder.log.playedIndices.dropFirst()).allSatisfy { $0 < $1 })
    }

    /// After 20 s of loss and jitter (10 %, 30 ms) the delay is back within 10 ms of where it
    /// was before, within 5 s of the link becoming clean, when what plays is quiet (the pauses
    /// between words, a quiet room): silence the delay no longer needs is left out. Speech is
    /// never cut short; its delay drains through the rate controller.
    @Test func afterLossAndJitterTheDelayIsBackWithinFiveSecondsOfACleanLink() {
        let (onset, calm, frames) = (1_000, 3_000, 5_000)
        let packets = FakeSender().packets(slots: frames)
        let clock = ReceiverClock()
        let steady = NetworkConditions(baseDelay: Self.steadyDelay, protectedEnds: 0)
        let impaired = NetworkConditions(baseDelay: Self.steadyDelay, jitter: 30 * millisecond, loss: .random(rate: 0.1), protectedEnds: 0)
        let phases = [
            NetworkRun(packets: Array(packets[..<onset]), conditions: steady, clock: clock, seed: 4),
            NetworkRun(packets: Array(packets[onset..<calm]), conditions: impaired, clock: clock, seed: 5),
            NetworkRun(packets: Array(packets[calm...]), conditions: steady, clock: clock, seed: 6),
        ]
        let deliveries = phases.flatMap(\.deliveries).sorted { ($0.arrival, $0.packet.index) < ($1.arrival, $1.packet.index) }
        let stream = ReceiveStream(decoder: ConstantLevelDecoder(level: 0.001), rateAdjuster: LinearRateAdjuster())
        var delayAtSecond: [Int: UInt64] = [:]
        PlayoutSimulation().run(stream, deliveries: deliveries, pulls: frames + 20, afterPull: { pull in
            if pull.index % 100 == 0 { delayAtSecond[pull.index / 100] = stream.statistics.currentDelay }
        })
        let before = delayAtSecond[onset / 100]!
        let impairedDelay = delayAtSecond[calm / 100]!
        #expect(impairedDelay >= before + 20 * millisecond, "the delay never grew: \(before) → \(impairedDelay)")
        let back = delayAtSecond[calm / 100 + 5]!
        #expect(back <= before + 10 * millisecond, "\(before) before, \(back) 5 s after: \(delayAtSecond.sorted { $0.key < $1.key })")
        #expect(delayAtSecond[frames / 100 - 1]! + 5 * millisecond >= before, "below the clean link's delay")
    }

    /// What playout did in 15 s of a steady link (jitter `steadyJitter`), 20 s of `spell` (10 %
    /// loss and 30 ms jitter unless told), then 20 s of the steady link again, every arrival
    /// passed through `arriving` (which sees it on the receiver's clock, from its start).
    struct SpellThenClean {
        static let lossAndJitter = NetworkConditions(baseDelay: JitterAdaptationTests.steadyDelay, jitter: 30 * millisecond, loss: .random(rate: 0.1), protectedEnds: 0)

        static let (onset, calm, frames) = (1_500, 3_500, 5_500)
        /// The delay after each pull, by pull.
        var delays: [Int: UInt64] = [:]
        /// The longest calm within 3 s of the link becoming clean.
        var longestCalm: UInt64 = 0

        init(steadyJitter: UInt64, seed: UInt64, spell: NetworkConditions = lossAndJitter, talkPattern: (talk: Int, silence: Int)? = nil, arriving: (_ sinceStart: UInt64, _ arrival: UInt64) -> UInt64) {
            let sender = FakeSender(talkPattern: talkPattern)
            let packets = sender.packets(slots: Self.frames)
            // Phases by frame time: with a talk pattern, packets are fewer than slots.
            let inSlots = { (slots: Range<Int>) in packets.filter { slots.contains(Int($0.timestamp) / sender.frameSamples) } }
            let clock = ReceiverClock()
            let steady = NetworkConditions(baseDelay: JitterAdaptationTests.steadyDelay, jitter: steadyJitter, protectedEnds: 0)
            let phases = [
                NetworkRun(packets: inSlots(0..<Self.onset), conditions: steady, clock: clock, seed: seed),
                NetworkRun(packets: inSlots(Self.onset..<Self.calm), conditions: spell, clock: clock, seed: seed + 1),
                NetworkRun(packets: inSlots(Self.calm..<Self.frames), conditions: steady, clock: clock, seed: seed + 2),
            ]
            let deliveries = phases.flatMap(\.deliveries).map { delivery in
                Delivery(arrival: arriving(delivery.arrival - clock.offset, delivery.arrival), packet: delivery.packet)
            }.sorted { ($0.arrival, $0.packet.index) < ($1.arrival, $1.packet.index) }
            let stream = ReceiveStream(decoder: ConstantLevelDecoder(level: 0.001), rateAdjuster: LinearRateAdjuster())
            var delays: [Int: UInt64] = [:]
            var longestCalm: UInt64 = 0
            PlayoutSimulation().run(stream, deliveries: deliveries, pulls: Self.frames + 20, afterPull: { pull in
                delays[pull.index] = stream.statistics.currentDelay
                if (Self.calm..<Self.calm + 300).contains(pull.index) { longestCalm = max(longestCalm, stream.statistics.calmDuration) }
            })
            (self.delays, self.longestCalm) = (delays, longestCalm)
        }

        /// The median delay over the 5 s before the spell.
        var before: UInt64 { (Self.onset - 500..<Self.onset).map { delays[$0]! }.sorted()[250] }
        /// The delays 5-10 s after the link became clean.
        var afterwards: [UInt64] { (Self.calm + 500..<Self.calm + 1_000).map { delays[$0]! } }
        var byHalfSecond: [String] {
            stride(from: Self.calm - 100, to: Self.calm + 1_000, by: 50).map { "\(($0 - Self.calm) * 10) ms: \(delays[$0]! / millisecond)" }
        }

        /// The spell raised the delay by `grewBy` at least; within 3 s of the link becoming
        /// clean arrivals were calm for the 2 s after which it is forgotten; and 5-10 s after,
        /// the delay's median is at most `backWithin` above where it was before, and the delay
        /// never 10 ms below.
        func expectSpellForgotten(grewBy: UInt64, backWithin: UInt64, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(longestCalm >= 2_000 * millisecond, "calm for \(longestCalm / millisecond) ms at most", sourceLocation: sourceLocation)
            let impairedDelay = delays[Self.calm]!
            #expect(impairedDelay >= before + grewBy, "the delay never grew: \(before) → \(impairedDelay)", sourceLocation: sourceLocation)
            let sorted = afterwards.sorted()
            let median = sorted[sorted.count / 2]
            #expect(median <= before + backWithin, "\(before / millisecond) ms before, median \(median / millisecond) ms 5-10 s after: \(byHalfSecond)", sourceLocation: sourceLocation)
            #expect(sorted.first! + 10 * millisecond >= before, "below the clean link's delay: \(byHalfSecond)", sourceLocation: sourceLocation)
        }
    }

    /// A clean link on a busy machine is clean but for stalls: now and then the receiving
    /// thread is held up for 20 ms and the packets of that time arrive together. A lone stall
    /// after a spell of loss and jitter must not bring back the spell's budget: the delay is
    /// still within 10 ms of where it was before, all through 5-10 s after the link became clean.
    @Test(arguments: [900 * millisecond, 1_300 * millisecond, 2_100 * millisecond])
    func stallsOnTheCleanLinkAfterLossAndJitterDoNotKeepTheDelayUp(stallEvery: UInt64) {
        let stallLength = 20 * millisecond
        let run = SpellThenClean(steadyJitter: 3 * millisecond, seed: 8) { sinceStart, arrival in
            // Whatever arrives during a stall is taken in when it ends.
            let intoStall = sinceStart % stallEvery
            return intoStall < stallLength ? arrival - intoStall + stallLength : arrival
        }
        // The statistics show why: within 3 s of the link becoming clean, arrivals were calm for
        // the 2 s after which the late spell is forgotten, the stalls notwithstanding (the calm
        // then ends: the budget is the clean link's own again).
        #expect(run.longestCalm >= 2_000 * millisecond, "calm for \(run.longestCalm / millisecond) ms at most")
        let before = run.before
        let impairedDelay = run.delays[SpellThenClean.calm]!
        #expect(impairedDelay >= before + 12 * millisecond, "the delay never grew: \(before) → \(impairedDelay)")
        let worst = run.afterwards.max()!
        #expect(worst <= before + 10 * millisecond, "\(before / millisecond) ms before, up to \(worst / millisecond) ms 5-10 s after: \(run.byHalfSecond)")
        #expect(run.afterwards.min()! + 10 * millisecond >= before, "below the clean link's delay: \(run.byHalfSecond)")
    }

    /// On a busy host the typical delay of a clean link steps up now and then for a moment (here
    /// 12 ms for 300 ms every 1.7 s, as the soak's sound-server peers showed). Such an excursion
    /// does not end the calm after a spell of loss and jitter: the spell is forgotten within 3 s
    /// and the delay is back within 10 ms of where it was, 5-10 s after the link became clean.
    @Test func shortStepsOfTheTypicalDelayDoNotEndTheCalm() {
        let (stepEvery, stepLength, step) = (1_700 * millisecond, 300 * millisecond, 12 * millisecond)
        let run = SpellThenClean(steadyJitter: 1 * millisecond, seed: 11) { sinceStart, arrival in
            sinceStart % stepEvery < stepLength ? arrival + step : arrival
        }
        #expect(run.longestCalm >= 2_000 * millisecond, "calm for \(run.longestCalm / millisecond) ms at most")
        let afterwards = run.afterwards.sorted()
        let median = afterwards[afterwards.count / 2]
        #expect(median <= run.before + 10 * millisecond, "\(run.before / millisecond) ms before, median \(median / millisecond) ms 5-10 s after: \(run.byHalfSecond)")
    }

    /// Between words a sender sends little (DTX): in the soak a peer's clicks made about a fifth
    /// of a second of packets each second. The calm after a spell of loss and jitter is a matter
    /// of time on the receiver's clock, not of how much media arrived, so a sparse stream is
    /// also back within 10 ms of its delay before, 5-10 s after the link became clean.
    @Test func aSparseStreamIsBackWithinFiveSecondsOfACleanLink() {
        let run = SpellThenClean(steadyJitter: 1 * millisecond, seed: 21, talkPattern: (talk: 12, silence: 48)) { _, arrival in arrival }
        run.expectSpellForgotten(grewBy: 12 * millisecond, backWithin: 10 * millisecond)
    }

    /// On a busy host a clean link is itself a few milliseconds late: the sender's sound server
    /// hands frames over in bunches, and now and then one packet comes through faster than the
    /// rest (the soak's peers had a typical delay of 6-7 ms on a clean link). After a spell of
    /// Wi-Fi (5 ± 10 ms, 1 % loss) the budget is only 15-20 ms, so that typical delay is no small
    /// part of it; the link is still calm, as its recent delays stay well below what the spell
    /// needed. The spell is forgotten within 3 s, and the delay is back within 10 ms of where it
    /// was, 5-10 s after the link became clean.
    @Test(arguments: [31, 45, 54] as [UInt64])
    func afterWiFiOnABusyHostTheDelayIsBackWithinFiveSeconds(seed: UInt64) {
        let wifi = NetworkConditions(baseDelay: Self.steadyDelay, jitter: 15 * millisecond, loss: .random(rate: 0.01), protectedEnds: 0)
        let (bunching, fastEvery) = (6 * millisecond, 1_000 * millisecond)
        let run = SpellThenClean(steadyJitter: 1 * millisecond, seed: seed, spell: wifi) { sinceStart, arrival in
            sinceStart % fastEvery < 20 * millisecond ? arrival : arrival + bunching
        }
        run.expectSpellForgotten(grewBy: 5 * millisecond, backWithin: 5 * millisecond)
    }

    /// A link whose lateness keeps coming back (a late spike in one packet of fifty, as a busy
    /// host or Wi-Fi gives) is not calm: the delay settles where the spikes need it and stays
    /// there, rather than dropping between spikes and stretching again at the next.
    @Test func recurringSpikesKeepTheDelayWhereItSettled() {
        let frames = 6_000
        let packets = FakeSender().packets(slots: frames)
        let spiky = NetworkConditions(baseDelay: Self.steadyDelay, jitter: 2 * millisecond, lateSpikeRate: 0.02, lateSpikeDelay: 15 * millisecond, protectedEnds: 0)
        let deliveries = NetworkRun(packets: packets, conditions: spiky, clock: ReceiverClock(), seed: 7).deliveries
        let stream = ReceiveStream(decoder: ConstantLevelDecoder(level: 0.001), rateAdjuster: LinearRateAdjuster())
        var settled: [UInt64] = []
        PlayoutSimulation().run(stream, deliveries: deliveries, pulls: frames, afterPull: { pull in
            if pull.index >= 2_000, pull.index % 10 == 0 { settled.append(stream.statistics.currentDelay) }
        })
        let spread = settled.max()! - settled.min()!
        print("recurring spikes: delay \(settled.min()! / millisecond)–\(settled.max()! / millisecond) ms once settled")
        #expect(spread <= 6 * millisecond, "the delay moved by \(spread / millisecond) ms")
    }
}

