/// Chooses the loss rate the Opus encoder sizes its in-band FEC for, from the loss the
/// peers report in RTCP receiver reports: enough redundancy to recover what the link loses,
/// and no more, because FEC bits come out of the primary frames' budget.
public struct LossAdaptation: Sendable {
    /// The setting now in force, in percent.
    public private(set) var expectedLossPercent: Int
    public let range: ClosedRange<Int>
    private var smoothedLoss: Double

    public init(initialPercent: Int, range: ClosedRange<Int> = 1...30) {
        expectedLossPercent = initialPercent
        self.range = range
        // No loss measured yet: the initial setting is a guess, not a measurement.
        smoothedLoss = 0
    }

    /// Feeds the worst fraction lost (0…1) any peer reported for our stream; returns the new
    /// setting when it changed. Rises at once, falls slowly, with a little margin over the
    /// measured loss, so that one quiet report does not strip the protection away.
    public mutating func reported(fractionLost: Double) -> Int? {
        let percent = max(0, min(100, fractionLost * 100))
        smoothedLoss = percent > smoothedLoss ? percent : smoothedLoss * 0.8 + percent * 0.2
        let wanted = min(range.upperBound, max(range.lowerBound, Int((smoothedLoss * 1.25).rounded()) + 1))
        guard wanted != expectedLossPercent else { return nil }
        expectedLossPercent = wanted
        return wanted
    }
}
