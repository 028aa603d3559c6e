/// Decides how much relative arrival delay the jitter buffer must absorb.
///
/// Two views are combined: a high quantile of a slowly forgetting histogram (the steady jitter),
/// and a peak for sudden late spikes that then decays. A spike raises the peak only once it
/// recurs: one stall of the sender, the network or a host delays a whole burst of packets
/// together, and following it would stretch the delay for every frame after it to save the few
/// frames of that burst. The peak therefore jumps to the smaller of the two largest recent
/// bursts: the second late burst is absorbed at once, a single one is concealed.
///
/// Both views forget slowly (a lone stall stays a small share of what they remember, and jitter
/// that pauses and comes back still has its budget). Once arrivals are calm, every delay of the
/// last half second or so well below the budget (the link became clean), the budget is capped
/// by a ceiling that holds for `calmTimeConstant` and then comes down within a few more to
/// twice the largest recent delay plus `calmMargin`: the delay returns to what the clean link
/// needs within seconds. The first late arrival lifts the cap, back to everything the views
/// remember. On a link that stays clean the ceiling never bites (the largest recent delay,
/// doubled, is already above the quantile), so the delay there does not move.
struct NetworkDelayEstimator: Sendable {
    private var histogram: DelayHistogram
    private let historyTimeConstant: UInt64
    private let peakTimeConstant: UInt64
    private let calmTimeConstant: UInt64
    /// The largest recent delay, decaying with a time constant of `calmTimeConstant / 2`.
    private var recentLargest: Double = 0
    /// While arrivals are calm: for how much media, and the ceiling on the budget.
    private var calm: (duration: UInt64, ceiling: Double)?
    /// What the ceiling keeps above twice the largest recent delay.
    private static let calmMargin = Double(MediaTime.nanoseconds(.milliseconds(5)))
    private let largestUsefulDelay: UInt64
    private var peak: Double = 0
    /// The largest delay of an earlier burst, decaying like the peak; a new burst that also
    /// comes late confirms it.
    private var earlierBurst: Double = 0
    /// The burst of arrivals going on: its largest delay, and when its last packet arrived.
    private var burst: (largestDelay: Double, lastArrival: UInt64)?

    init(quantile: Double, historyTimeConstant: UInt64, peakTimeConstant: UInt64, calmTimeConstant: UInt64, largestUsefulDelay: UInt64) {
        histogram = DelayHistogram(bucketWidth: 1_000_000, range: largestUsefulDelay, fraction: quantile)
        self.historyTimeConstant = historyTimeConstant
        self.peakTimeConstant = peakTimeConstant
        self.calmTimeConstant = calmTimeConstant
        self.largestUsefulDelay = largestUsefulDelay
    }

    /// The delay to budget for, in nanoseconds; updated as packets arrive, so reading it is cheap.
    private(set) var budget: UInt64 = 0
    /// Whether the calm ceiling holds the budget below what the views remember: the link
    /// became clean after a spell of lateness, and the delay should follow it down now.
    private(set) var isCalmedDown = false

    /// Records one packet's relative delay and its arrival time (nanoseconds, receiver's clock);
    /// `frameDuration` sets how much older packets are forgotten.
    ///
    /// Memory is counted in received media rather than wall time, so a silent peer is not forgotten.
    /// Packets arriving within half a frame of each other belong to one burst.
    mutating func record(relativeDelay: UInt64, arrival: UInt64, frameDuration: UInt64) {
        // A delay the buffer can never absorb is an outlier: it must not pin the target at its maximum.
        guard relativeDelay <= largestUsefulDelay else { return }
        let delay = Double(relativeDelay)
        histogram.add(relativeDelay, retention: Self.retention(frameDuration, timeConstant: historyTimeConstant))
        let peakRetention = Self.retention(frameDuration, timeConstant: peakTimeConstant)
        peak *= peakRetention
        earlierBurst *= peakRetention
        if let current = burst, arrival >= current.lastArrival, arrival - current.lastArrival <= frameDuration / 2 {
            burst = (max(current.largestDelay, delay), arrival)
        } else {
            if let finished = burst { earlierBurst = max(earlierBurst, finished.largestDelay) }
            burst = (delay, arrival)
        }
        peak = max(peak, min(burst!.largestDelay, earlierBurst))
        let remembered = max(Double(histogram.quantile), peak)
        recentLargest = max(delay, recentLargest * Self.retention(frameDuration, timeConstant: calmTimeConstant / 2))
        let ceiling = calmCeiling(remembered: remembered, frameDuration: frameDuration)
        isCalmedDown = ceiling < remembered
        budget = UInt64(min(remembered, ceiling))
    }

    /// The cap on the budget while arrivals are calm; infinite otherwise.
    private mutating func calmCeiling(remembered: Double, frameDuration: UInt64) -> Double {
        guard recentLargest < remembered / 2 else {
            calm = nil
            return .infinity
        }
        var (duration, ceiling) = calm ?? (0, remembered)
        duration += frameDuration
        if duration > calmTimeConstant {
            ceiling = max(2 * recentLargest + Self.calmMargin, ceiling * Self.retention(frameDuration, timeConstant: calmTimeConstant))
        }
        calm = (duration, ceiling)
        return ceiling
    }

    /// First-order decay factor for one step of `step` with the given time constant.
    private static func retention(_ step: UInt64, timeConstant: UInt64) -> Double {
        max(0.5, 1 - Double(step) / Double(timeConstant))
    }
}
