/// Decides how much relative arrival delay the jitter buffer must absorb.
///
/// Two views are combined: a high quantile of a slowly forgetting histogram (the steady jitter),
/// and a peak that jumps at once to any delay above it and then decays (sudden late spikes).
/// The result therefore grows within one packet but shrinks only over seconds.
struct NetworkDelayEstimator: Sendable {
    private var histogram: DelayHistogram
    private let historyTimeConstant: UInt64
    private let peakTimeConstant: UInt64
    private let largestUsefulDelay: UInt64
    private var peak: Double = 0

    init(quantile: Double, historyTimeConstant: UInt64, peakTimeConstant: UInt64, largestUsefulDelay: UInt64) {
        histogram = DelayHistogram(bucketWidth: 1_000_000, range: largestUsefulDelay, fraction: quantile)
        self.historyTimeConstant = historyTimeConstant
        self.peakTimeConstant = peakTimeConstant
        self.largestUsefulDelay = largestUsefulDelay
    }

    /// The delay to budget for, in nanoseconds; updated as packets arrive, so reading it is cheap.
    private(set) var budget: UInt64 = 0

    /// Records one packet's relative delay; `frameDuration` sets how much older packets are forgotten.
    ///
    /// Memory is counted in received media rather than wall time, so a silent peer is not forgotten.
    mutating func record(relativeDelay: UInt64, frameDuration: UInt64) {
        // A delay the buffer can never absorb is an outlier: it must not pin the target at its maximum.
        guard relativeDelay <= largestUsefulDelay else { return }
        histogram.add(relativeDelay, retention: Self.retention(frameDuration, timeConstant: historyTimeConstant))
        peak = max(peak * Self.retention(frameDuration, timeConstant: peakTimeConstant), Double(relativeDelay))
        budget = max(histogram.quantile, UInt64(peak))
    }

    /// First-order decay factor for one step of `step` with the given time constant.
    private static func retention(_ step: UInt64, timeConstant: UInt64) -> Double {
        max(0.5, 1 - Double(step) / Double(timeConstant))
    }
}
