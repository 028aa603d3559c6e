import Glibc

/// The residual echo suppressor's decision: from how coherent each frequency bin of the
/// canceller's output is with the far end, a gain per bin for the next hop.
///
/// Echo the canceller leaves behind (a path it has not learned yet: the first seconds of a
/// call, a lid moved) is the far end through a filter, so it is coherent with the far end; the
/// near talker and the room's noise are not. Coherence does not depend on level, so a near
/// talker louder than the echo is not taken for it, which a suppressor driven by the far
/// end's power alone cannot tell (Docs/acoustic-lab.md, "A residual echo suppressor of our
/// own"). Bins are grouped in bands about a sixth of an octave wide; each band's coherence,
/// less the bias its estimate has when nothing is coherent, is followed quickly up and slowly
/// down, and its gain falls at once and comes back by halves. Pure: no state but the
/// followers, nothing allocated after `init`.
public struct ResidualEchoGains: Sendable {
    /// Tuned in the acoustic lab's rooms (numpy, then this code; acoustic-lab.md): echo after
    /// a moved path held down within 0.25 s, the near end's PESQ-WB in double talk unchanged
    /// to the hundredth.
    public struct Tuning: Sendable, Equatable {
        /// What an estimate over about 30 hops reads when nothing is coherent.
        public var bias: Float = 0.3
        /// The gain is 1 − this × the band's (unbiased) coherence.
        public var overSuppression: Float = 3
        /// The lowest gain: −30 dB.
        public var floor: Float = 0.03
        /// How much of the way to a higher coherence the follower goes in a hop, and to a lower one.
        public var rise: Float = 0.5
        public var fall: Float = 0.05
        /// How much of the way back up the gain goes in a hop.
        public var recovery: Float = 0.5
        public init() {}
    }

    public let tuning: Tuning
    /// Each band's bins, first...last; bins below the first band follow it.
    public let bands: [ClosedRange<Int>]
    public let binCount: Int
    private var followed: [Float]
    private var bandGains: [Float]

    /// Gains for `binCount` bins (a real FFT's length / 2 + 1) in `bandCount` bands spaced
    /// evenly in log frequency from bin 2 up.
    public init(binCount: Int, bandCount: Int = 32, tuning: Tuning = Tuning()) {
        precondition(binCount > 3 && bandCount > 0)
        self.binCount = binCount
        self.tuning = tuning
        var edges: [Int] = []
        for index in 0...bandCount {
            let edge = Int((2.0 * pow(Double(binCount) / 2.0, Double(index) / Double(bandCount))).rounded())
            if edges.last != edge { edges.append(edge) }
        }
        bands = zip(edges, edges.dropFirst()).map { $0...($1 - 1) }
        followed = [Float](repeating: 0, count: bands.count)
        bandGains = [Float](repeating: 1, count: bands.count)
    }

    /// Follows `coherence` (one value in 0...1 per bin, this hop's) and writes each bin's gain
    /// into `gains` (`binCount` values).
    public mutating func update(coherence: UnsafeBufferPointer<Float>, gains: UnsafeMutableBufferPointer<Float>) {
        precondition(coherence.count == binCount && gains.count == binCount)
        for (band, bins) in bands.enumerated() {
            var sum: Float = 0
            for bin in bins { sum += coherence[bin] }
            let unbiased = max(0, (sum / Float(bins.count) - tuning.bias) / (1 - tuning.bias))
            let rate = unbiased > followed[band] ? tuning.rise : tuning.fall
            followed[band] += rate * (unbiased - followed[band])
            let target = min(1, max(tuning.floor, 1 - tuning.overSuppression * followed[band]))
            bandGains[band] = target < bandGains[band] ? target : bandGains[band] + tuning.recovery * (target - bandGains[band])
            for bin in bins { gains[bin] = bandGains[band] }
        }
        let first = bands[0].lowerBound
        for bin in 0..<first { gains[bin] = bandGains[0] }
        for bin in (bands[bands.count - 1].upperBound + 1)..<binCount { gains[bin] = bandGains[bands.count - 1] }
    }

    /// Whether every band passes whole (nothing held down, nothing coming back up).
    public var passesAll: Bool { bandGains.allSatisfy { $0 == 1 } }
}
