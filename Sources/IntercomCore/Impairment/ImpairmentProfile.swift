/// How a simulated network mistreats one direction of traffic.
///
/// Jitter is uniform: each packet's delay is drawn evenly from `baseDelay ± jitter` and
/// clamped at zero. A uniform draw has hard bounds, so tests can assert them.
public struct ImpairmentProfile: Equatable, Sendable {
    /// Independent random loss, percent of packets (0–100).
    public var lossPercent: Double
    /// Correlated (bursty) loss on top of the random loss, or nil for none.
    public var burstLoss: BurstLoss?
    public var baseDelayNanoseconds: UInt64
    /// Half-width of the uniform delay spread.
    public var jitterNanoseconds: UInt64
    /// Percent of packets held back until after the packet sent next.
    public var reorderPercent: Double
    /// Percent of packets delivered twice.
    public var duplicatePercent: Double
    /// Sender clock error in parts per million: positive stretches the delivery timeline,
    /// as if the sender's clock ran slow against the receiver's.
    public var clockSkewPPM: Double
    /// Seeds the model's random draws, so a run can be replayed.
    public var seed: UInt64

    public init(
        lossPercent: Double = 0, burstLoss: BurstLoss? = nil, baseDelayNanoseconds: UInt64 = 0,
        jitterNanoseconds: UInt64 = 0, reorderPercent: Double = 0, duplicatePercent: Double = 0,
        clockSkewPPM: Double = 0, seed: UInt64 = 1
    ) {
        self.lossPercent = lossPercent
        self.burstLoss = burstLoss
        self.baseDelayNanoseconds = baseDelayNanoseconds
        self.jitterNanoseconds = jitterNanoseconds
        self.reorderPercent = reorderPercent
        self.duplicatePercent = duplicatePercent
        self.clockSkewPPM = clockSkewPPM
        self.seed = seed
    }

    /// No impairment at all.
    public static let clean = ImpairmentProfile()
    /// A wired LAN: 1 ms ± 0.5 ms.
    public static let lan = ImpairmentProfile(baseDelayNanoseconds: 1_000_000, jitterNanoseconds: 500_000)
    /// A busy Wi-Fi link: 5 ms ± 10 ms and 1 % loss.
    public static let wifi = ImpairmentProfile(
        lossPercent: 1, baseDelayNanoseconds: 5_000_000, jitterNanoseconds: 10_000_000)
    /// 5 % random loss.
    public static let loss5 = ImpairmentProfile(lossPercent: 5)
    /// 10 % random loss, 30 ms ± 15 ms.
    public static let loss10Jitter30 = ImpairmentProfile(
        lossPercent: 10, baseDelayNanoseconds: 30_000_000, jitterNanoseconds: 15_000_000)
    /// Gilbert–Elliott loss: about 5 % overall, in bursts of 3 packets on average.
    public static let bursty = ImpairmentProfile(burstLoss: BurstLoss(lossPercent: 5, meanBurstLength: 3))

    /// The presets by the names the command line uses.
    public static let presets: [(name: String, profile: ImpairmentProfile)] = [
        ("clean", .clean), ("lan", .lan), ("wifi", .wifi), ("loss5", .loss5),
        ("loss10-jitter30", .loss10Jitter30), ("bursty", .bursty),
    ]

    /// The preset with this name, or nil.
    public static func preset(named name: String) -> ImpairmentProfile? {
        presets.first { $0.name == name }?.profile
    }
}

/// Gilbert–Elliott burst loss, given as what one observes: the overall loss and the mean
/// length of a run of lost packets.
///
/// The two-state chain loses every packet in the bad state and none in the good state.
/// A run in the bad state lasts 1/r packets on average and the chain spends p/(p+r) of
/// the time there, which gives r and p below.
public struct BurstLoss: Equatable, Sendable {
    /// Long-run percent of packets lost (0 ≤ loss < 100).
    public var lossPercent: Double
    /// Mean number of packets in a loss burst (≥ 1).
    public var meanBurstLength: Double

    /// r: the probability of leaving the bad state after a lost packet.
    public var badToGoodProbability: Double { 1 / meanBurstLength }

    /// p: the probability of entering the bad state after a delivered packet.
    public var goodToBadProbability: Double {
        let loss = lossPercent / 100
        return loss * badToGoodProbability / (1 - loss)
    }

    /// Whether a chain with these numbers exists: both probabilities within 0...1.
    public var isAchievable: Bool {
        meanBurstLength >= 1 && lossPercent >= 0 && lossPercent < 100 && goodToBadProbability <= 1
    }
}
