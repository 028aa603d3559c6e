@testable import IntercomCore
import Testing

struct DelayHistogramTests {
    /// The tracked quantile must equal a full recount of the (forgetting) weights after every sample.
    @Test(arguments: [0.5, 0.95, 0.97])
    func tracksTheQuantileOfTheWeightedSamples(_ fraction: Double) {
        var histogram = DelayHistogram(bucketWidth: 1_000_000, range: 200_000_000, fraction: fraction)
        var random = SeededGenerator(seed: 42)
        var weights = [Double](repeating: 0, count: 202)
        let retention = 0.99
        for step in 0..<3_000 {
            // Shifting distributions, so the quantile has to move both ways.
            let spread: UInt64 = step % 1_000 < 500 ? 10_000_000 : 120_000_000
            let delay = UInt64.random(in: 0...spread, using: &random)
            histogram.add(delay, retention: retention)
            for bucket in weights.indices { weights[bucket] *= retention }
            weights[min(Int(delay / 1_000_000), 201)] += 1

            let allowedAbove = (1 - fraction) * weights.reduce(0, +)
            var weightAbove = 0.0
            var expectedBucket = weights.count - 1
            while true {
                weightAbove += weights[expectedBucket]
                if weightAbove > allowedAbove || expectedBucket == 0 { break }
                expectedBucket -= 1
            }
            #expect(histogram.quantile == UInt64(expectedBucket + 1) * 1_000_000, "step \(step)")
            if histogram.quantile != UInt64(expectedBucket + 1) * 1_000_000 { return }
        }
    }
}
