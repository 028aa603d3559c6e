@testable import IntercomCore
import Testing

@Suite("Impairment model")
struct ImpairmentModelTests {
    static let packetCount = 100_000
    static let interval: UInt64 = 20_000_000

    /// Schedules `packetCount` packets sent every 20 ms; element i holds packet i's deliveries.
    static func run(_ profile: ImpairmentProfile, count: Int = packetCount) -> [[UInt64]] {
        var model = ImpairmentModel(profile: profile)
        return (0..<count).map { model.schedule(packetSentAt: UInt64($0) * interval) }
    }

    static func percentLost(_ deliveries: [[UInt64]]) -> Double {
        Double(deliveries.filter(\.isEmpty).count) * 100 / Double(deliveries.count)
    }

    @Test func cleanDeliversEverythingAtOnce() {
        let deliveries = Self.run(.clean, count: 1000)
        #expect(deliveries.enumerated().allSatisfy { index, times in times == [UInt64(index) * Self.interval] })
    }

    @Test(arguments: [1.0, 5.0, 10.0, 30.0])
    func randomLossHitsItsTarget(percent: Double) {
        let lost = Self.percentLost(Self.run(ImpairmentProfile(lossPercent: percent, seed: 42)))
        #expect(abs(lost - percent) <= 0.5, "lost \(lost) %")
    }

    @Test func burstLossHitsItsRateAndBurstLength() {
        let deliveries = Self.run(.bursty)
        let lost = Self.percentLost(deliveries)
        #expect(abs(lost - 5) <= 0.5, "lost \(lost) %")

        var bursts: [Int] = []
        var run = 0
        for times in deliveries {
            if times.isEmpty {
                run += 1
            } else if run > 0 {
                bursts.append(run)
                run = 0
            }
        }
        let meanBurst = Double(bursts.reduce(0, +)) / Double(bursts.count)
        #expect(abs(meanBurst - 3) <= 0.3, "mean burst \(meanBurst)")
        // Random loss at the same rate would have a mean run of about 1.05.
        #expect(bursts.contains { $0 >= 8 })
    }

    @Test func burstParametersFollowTheChain() {
        let burst = BurstLoss(lossPercent: 5, meanBurstLength: 3)
        #expect(abs(burst.badToGoodProbability - 1.0 / 3) < 1e-12)
        #expect(abs(burst.goodToBadProbability - 0.05 / 3 / 0.95) < 1e-12)
        #expect(burst.isAchievable)
        #expect(!BurstLoss(lossPercent: 90, meanBurstLength: 1).isAchievable)
        #expect(!BurstLoss(lossPercent: 5, meanBurstLength: 0.5).isAchievable)
    }

    @Test func jitterStaysWithinItsUniformBounds() {
        let profile = ImpairmentProfile(baseDelayNanoseconds: 30_000_000, jitterNanoseconds: 15_000_000, seed: 5)
        let delays = Self.run(profile).enumerated().map { index, times in times[0] - UInt64(index) * Self.interval }
        #expect(delays.allSatisfy { (15_000_000...45_000_000).contains($0) })
        #expect(delays.min()! < 15_100_000)
        #expect(delays.max()! > 44_900_000)
        let mean = Double(delays.reduce(0, +)) / Double(delays.count)
        #expect(abs(mean - 30_000_000) < 200_000, "mean \(mean)")
    }

    @Test func delayNeverPrecedesTheSend() {
        let deliveries = Self.run(.wifi, count: 10_000)
        for (index, times) in deliveries.enumerated() {
            #expect(times.allSatisfy { $0 >= UInt64(index) * Self.interval })
        }
        #expect(abs(Self.percentLost(deliveries) - 1) <= 0.5)
    }

    @Test func reorderedPacketsArriveAfterTheirSuccessor() {
        let deliveries = Self.run(ImpairmentProfile(baseDelayNanoseconds: 10_000_000, reorderPercent: 5, seed: 9))
        let firstTimes = deliveries.map { $0[0] }
        let overtaken = zip(firstTimes, firstTimes.dropFirst()).filter { $0 > $1 }.count
        let percent = Double(overtaken) * 100 / Double(deliveries.count)
        // Two held packets in a row stay in order between themselves, so slightly under 5 %.
        #expect((4.5...5.2).contains(percent), "overtaken \(percent) %")
    }

    @Test func duplicatesHitTheirTarget() {
        let deliveries = Self.run(ImpairmentProfile(duplicatePercent: 3, seed: 11))
        let percent = Double(deliveries.filter { $0.count == 2 }.count) * 100 / Double(deliveries.count)
        #expect(abs(percent - 3) <= 0.3, "duplicated \(percent) %")
        #expect(deliveries.allSatisfy { $0.count <= 2 && $0 == $0.sorted() })
    }

    @Test func sameSeedSameScheduleOtherSeedOtherSchedule() {
        var profile = ImpairmentProfile.loss10Jitter30
        profile.reorderPercent = 2
        profile.duplicatePercent = 2
        profile.seed = 1234
        let first = Self.run(profile, count: 5000)
        #expect(first == Self.run(profile, count: 5000))
        profile.seed = 1235
        #expect(first != Self.run(profile, count: 5000))
    }

    @Test func clockSkewStretchesTheTimeline() {
        let deliveries = Self.run(ImpairmentProfile(clockSkewPPM: 1000), count: 501)
        // Packet 500 is sent at 10 s; 1000 ppm later is 10 ms later.
        #expect(deliveries[500] == [10_010_000_000])
        #expect(deliveries[0] == [0])

        let compressed = Self.run(ImpairmentProfile(baseDelayNanoseconds: 50_000_000, clockSkewPPM: -1000), count: 501)
        #expect(compressed[500] == [10_040_000_000])
    }
}
