/// The largest delay of late bursts that recur, forgetting as it goes.
///
/// One stall of the sender, the network or a host delays a whole burst of packets together;
/// following it would stretch the delay for every frame after it to save the few frames of that
/// burst. A burst therefore raises the peak only to what an earlier burst also reached: the
/// second late burst is absorbed at once, a single one is concealed.
struct RecurringLateness: Sendable {
    /// The delay that late bursts have reached at least twice, decaying.
    private(set) var peak: Double = 0
    /// The largest delay of an earlier burst, decaying like the peak.
    private var earlierBurst: Double = 0

    /// Lets both figures decay by `retention` (0 < retention ≤ 1).
    mutating func decay(_ retention: Double) {
        peak *= retention
        earlierBurst *= retention
    }

    /// A burst ended with `largestDelay` as its latest packet's delay.
    mutating func burstEnded(largestDelay: Double) {
        earlierBurst = max(earlierBurst, largestDelay)
    }

    /// Keeps `share` of what was learned so far and takes on what `later` learned since.
    mutating func forget(keeping share: Double, takingOn later: RecurringLateness) {
        peak = max(peak * share, later.peak)
        earlierBurst = max(earlierBurst * share, later.earlierBurst)
    }

    /// The burst going on has reached `largestDelay` so far.
    mutating func burstReached(_ largestDelay: Double) {
        peak = max(peak, min(largestDelay, earlierBurst))
    }
}
