/// Decides how much relative arrival delay the jitter buffer must absorb.
///
/// Two views are combined: a high quantile of a slowly forgetting histogram (the steady jitter),
/// and a peak for sudden late spikes that then decays. A spike raises the peak only once it
/// recurs: one stall of the sender, the network or a host delays a whole burst of packets
/// together, and following it would stretch the delay for every frame after it to save the few
/// frames of that burst. The peak therefore jumps to the smaller of the two largest recent
/// bursts: the second late burst is absorbed at once, a single one is concealed.
struct NetworkDelayEstimator: Sendable {
    private var histogram: DelayHistogram
    private let historyTimeConstant: UInt64
    private let peakTimeConstant: UInt64
    private let largestUsefulDelay: UInt64
    private var peak: Double = 0
    /// The largest delay of an earlier burst, decaying like the peak; a new burst that also
    /// comes late confirms it.
    private var earlierBurst: Double = 0
    /// The burst of arrivals going on: its largest delay, and when its last packet arrived.
    private var burst: (largestDelay: Double, lastArrival: UInt64)?

    init(quantile: Double, historyTimeConstant: UInt64, peakTimeConstant: UInt64, largestUsefulDelay: UInt64) {
        histogram = DelayHistogram(bucketWidth: 1_000_000, range: largestUsefulDelay, fraction: quantile)
        self.historyTimeConstant = historyTimeConstant
        self.peakTimeConstant = peakTimeConstant
        self.largestUsefulDelay = largestUsefulDelay
    }

    /// The delay to budget for, in nanoseconds; updated as packets arrive, so reading it is cheap.
    private(set) var budget: UInt64 = 0

    /// Records one packet's relative delay and its arrival time (nanoseconds, receiver's clock);
    /// `frameDuration` sets how much older packets are forgotten.
    ///
    /// Memory is counted in received media rather than wall time, so a silent peer is not forgotten.
    /// Packets arriving within half a frame of each other belong to one burst.
    mutating func record(relativeDelay: UInt64, arrival: UInt64, frameDuration: UInt64) {
        // A delay the buffer can never absorb is an outlier: it must not pin the target at its maximum.
        guard relativeDelay <= largestUsefulDelay else { return }
        histogram.add(relativeDelay, retention: Self.retention(frameDuration, timeConstant: historyTimeConstant))
        let peakRetention = Self.retention(frameDuration, timeConstant: peakTimeConstant)
        peak *= peakRetention
        earlierBurst *= peakRetention
        let delay = Double(relativeDelay)
        if let current = burst, arrival >= current.lastArrival, arrival - current.lastArrival <= frameDuration / 2 {
            burst = (max(current.largestDelay, delay), arrival)
        } else {
            if let finished = burst { earlierBurst = max(earlierBurst, finished.largestDelay) }
            burst = (delay, arrival)
        }
        peak = max(peak, min(burst!.largestDelay, earlierBurst))
        budget = max(histogram.quantile, UInt64(peak))
    }

    /// First-order decay factor for one step of `step` with the given time constant.
    private static func retention(_ step: UInt64, timeConstant: UInt64) -> Double {
        max(0.5, 1 - Double(step) / Double(timeConstant))
    }
}
