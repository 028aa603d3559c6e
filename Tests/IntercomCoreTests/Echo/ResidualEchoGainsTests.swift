import IntercomCore
import Testing

/// The residual echo suppressor's decision on coherence values made by hand.
@Suite struct ResidualEchoGainsTests {
    static let bins = 241

    static func gains(after hops: [Float], bandCount: Int = 32) -> (ResidualEchoGains, [Float]) {
        var decision = ResidualEchoGains(binCount: bins, bandCount: bandCount)
        var out = [Float](repeating: -1, count: bins)
        for value in hops {
            let coherence = [Float](repeating: value, count: bins)
            coherence.withUnsafeBufferPointer { coherence in
                out.withUnsafeMutableBufferPointer { decision.update(coherence: coherence, gains: $0) }
            }
        }
        return (decision, out)
    }

    /// The bands follow one another from bin 2 to the last, a sixth of an octave or more each,
    /// and every bin gets a gain.
    @Test func bandsCoverEveryBinOnce() {
        let decision = ResidualEchoGains(binCount: Self.bins)
        #expect(decision.bands.first?.lowerBound == 2)
        #expect(decision.bands.last?.upperBound == Self.bins - 1)
        for (a, b) in zip(decision.bands, decision.bands.dropFirst()) { #expect(b.lowerBound == a.upperBound + 1) }
        #expect(decision.bands.count > 20)
        let (_, out) = Self.gains(after: [0])
        #expect(out.allSatisfy { $0 == 1 })
    }

    /// What an estimate reads when nothing is coherent (up to the bias) takes nothing away.
    @Test(arguments: [Float(0), 0.1, 0.29])
    func incoherentPasses(coherence: Float) {
        let (_, out) = Self.gains(after: [Float](repeating: coherence, count: 200))
        #expect(out.allSatisfy { $0 == 1 })
    }

    /// Echo the canceller has not learned (coherence near 1) is brought to the floor at once,
    /// and released by halves once it has gone, over some tens of hops (the follower falls by
    /// 5 % a hop).
    @Test func coherentEchoFallsAtOnceAndRecovers() {
        let tuning = ResidualEchoGains.Tuning()
        let (_, first) = Self.gains(after: [1])
        #expect(first.allSatisfy { $0 == tuning.floor })
        let (_, held) = Self.gains(after: [1, 1, 1, 0, 0, 0, 0, 0])
        #expect(held.allSatisfy { $0 < 0.2 }, "still held down 5 hops after: \(held[10])")
        let (_, back) = Self.gains(after: [1, 1, 1] + [Float](repeating: 0, count: 80))
        #expect(back.allSatisfy { $0 > 0.9 }, "not released 80 hops after: \(back[10])")
    }

    /// Partly coherent (echo about as loud as what else is there) is partly suppressed: the
    /// gain falls with the coherence over the bias.
    @Test func gainFollowsTheCoherenceOverTheBias() {
        let (_, half) = Self.gains(after: [Float](repeating: 0.44, count: 100))
        let (_, more) = Self.gains(after: [Float](repeating: 0.51, count: 100))
        #expect(half[100] > more[100])
        #expect(abs(half[100] - 0.4) < 0.01, "\(half[100])")  // 1 − 3 × (0.44 − 0.3) / 0.7
    }

    /// Each band is judged on its own bins: echo in one band leaves the others alone.
    @Test func bandsAreIndependent() {
        var decision = ResidualEchoGains(binCount: Self.bins)
        let band = decision.bands[10]
        var coherence = [Float](repeating: 0, count: Self.bins)
        for bin in band { coherence[bin] = 1 }
        var out = [Float](repeating: -1, count: Self.bins)
        coherence.withUnsafeBufferPointer { coherence in
            out.withUnsafeMutableBufferPointer { decision.update(coherence: coherence, gains: $0) }
        }
        for bin in 0..<Self.bins { #expect(out[bin] == (band.contains(bin) ? decision.tuning.floor : 1)) }
    }
}
