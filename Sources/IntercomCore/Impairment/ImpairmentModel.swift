/// Decides, packet by packet, when (and whether) a simulated network delivers.
///
/// Times are nanoseconds of any monotonic clock, passed in. The model only computes
/// delivery times; a relay or a test does the delivering.
public struct ImpairmentModel: Sendable {
    public let profile: ImpairmentProfile

    private var generator: SeededGenerator
    private var burstIsInBadState = false
    /// The first send time: clock skew stretches the timeline from here.
    private var skewOrigin: UInt64?
    private var previousSendTime: UInt64?

    /// The spacing assumed before two packets have been seen: a common voice frame.
    private static let defaultSendInterval: UInt64 = MediaTime.nanoseconds(.milliseconds(20))
    /// How much later than the next packet's latest possible delivery a held packet lands.
    private static let reorderMargin: UInt64 = MediaTime.nanoseconds(.milliseconds(1))

    /// A model drawing from the profile's seed.
    public init(profile: ImpairmentProfile) {
        self.init(profile: profile, seed: profile.seed)
    }

    /// A model drawing from another seed, so two directions with one profile stay independent.
    public init(profile: ImpairmentProfile, seed: UInt64) {
        self.profile = profile
        self.generator = SeededGenerator(seed: seed)
    }

    /// The delivery times of a packet sent at `now`: none when it is lost, two when it is
    /// duplicated. Times are never before `now` and are sorted.
    ///
    /// A reordered packet is held back by one send interval (the last one seen) plus the
    /// whole jitter spread and a millisecond, so with evenly paced packets it arrives after
    /// the packet sent next.
    public mutating func schedule(packetSentAt now: UInt64) -> [UInt64] {
        let sendInterval = previousSendTime.map { now >= $0 ? now - $0 : 0 } ?? Self.defaultSendInterval
        previousSendTime = now
        if skewOrigin == nil { skewOrigin = now }

        guard !isLost() else { return [] }

        var delivery = skewed(now) + sampledDelay()
        if chance(percent: profile.reorderPercent) {
            delivery += sendInterval + 2 * profile.jitterNanoseconds + Self.reorderMargin
        }
        var deliveries = [max(delivery, now)]
        if chance(percent: profile.duplicatePercent) {
            deliveries.append(max(skewed(now) + sampledDelay(), now))
        }
        return deliveries.sorted()
    }

    private mutating func isLost() -> Bool {
        var lost = false
        if let burst = profile.burstLoss {
            let leaveProbability = burstIsInBadState ? burst.badToGoodProbability : burst.goodToBadProbability
            if Double.random(in: 0..<1, using: &generator) < leaveProbability {
                burstIsInBadState.toggle()
            }
            lost = burstIsInBadState
        }
        // Drawn even after a burst loss, so adding burst loss does not shift the random-loss pattern.
        let randomlyLost = chance(percent: profile.lossPercent)
        return lost || randomlyLost
    }

    /// Base delay plus uniform jitter, clamped at zero.
    private mutating func sampledDelay() -> UInt64 {
        let jitter = Int64(clamping: profile.jitterNanoseconds)
        let offset = jitter == 0 ? 0 : Int64.random(in: -jitter...jitter, using: &generator)
        let delay = Int64(clamping: profile.baseDelayNanoseconds).addingReportingOverflow(offset)
        return delay.overflow || delay.partialValue < 0 ? 0 : UInt64(delay.partialValue)
    }

    /// The send time on the stretched timeline.
    private func skewed(_ now: UInt64) -> UInt64 {
        guard profile.clockSkewPPM != 0, let origin = skewOrigin, now > origin else { return now }
        let elapsed = Double(now - origin) * (1 + profile.clockSkewPPM / 1_000_000)
        return origin + UInt64(max(elapsed.rounded(), 0))
    }

    private mutating func chance(percent: Double) -> Bool {
        percent > 0 && Double.random(in: 0..<100, using: &generator) < percent
    }
}
