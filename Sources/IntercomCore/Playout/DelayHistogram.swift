/// A histogram of delays that slowly forgets old samples and tracks one quantile of them.
///
/// Instead of decaying every bucket at each sample, the weight of new samples grows by the inverse
/// of the forgetting factor; the buckets are rescaled only when that weight gets large. The
/// quantile moves a bucket at a time as samples arrive, so reading it costs nothing.
struct DelayHistogram: Sendable {
    private let bucketWidth: UInt64
    private let fraction: Double
    /// The last bucket also collects every delay beyond the range.
    private var weights: [Double]
    private var totalWeight: Double = 0
    private var sampleWeight: Double = 1
    /// The bucket holding the quantile, and the weight of all buckets above it.
    private var quantileBucket = 0
    private var weightAbove: Double = 0

    /// A histogram of `bucketWidth` buckets covering `range`, tracking the `fraction` quantile (e.g. 0.95).
    init(bucketWidth: UInt64, range: UInt64, fraction: Double) {
        self.bucketWidth = bucketWidth
        self.fraction = fraction
        weights = Array(repeating: 0, count: Int(range / bucketWidth) + 2)
    }

    /// The upper edge of the bucket holding the quantile; 0 when empty.
    var quantile: UInt64 {
        totalWeight > 0 ? UInt64(quantileBucket + 1) * bucketWidth : 0
    }

    /// Adds `delay`, after shrinking the weight of all earlier samples by `retention` (0 < retention ≤ 1).
    mutating func add(_ delay: UInt64, retention: Double) {
        sampleWeight /= retention
        if sampleWeight > 1e100 { rescale() }
        let bucket = min(Int(delay / bucketWidth), weights.count - 1)
        weights[bucket] += sampleWeight
        totalWeight += sampleWeight
        if bucket > quantileBucket { weightAbove += sampleWeight }
        // Keep: weight above the quantile bucket ≤ allowed tail < that plus the bucket's own weight.
        let allowedAbove = (1 - fraction) * totalWeight
        while weightAbove > allowedAbove, quantileBucket < weights.count - 1 {
            quantileBucket += 1
            weightAbove -= weights[quantileBucket]
        }
        while quantileBucket > 0, weightAbove + weights[quantileBucket] <= allowedAbove {
            weightAbove += weights[quantileBucket]
            quantileBucket -= 1
        }
    }

    /// Shrinks the weight of every sample so far to `share` of it (0 < share ≤ 1), so what
    /// comes next soon outweighs them.
    mutating func forget(keeping share: Double) {
        sampleWeight /= share
        if sampleWeight > 1e100 { rescale() }
    }

    private mutating func rescale() {
        for bucket in weights.indices { weights[bucket] /= sampleWeight }
        totalWeight /= sampleWeight
        sampleWeight = 1
        // Recomputed rather than scaled, so rounding from the incremental updates does not pile up.
        weightAbove = weights[(quantileBucket + 1)...].reduce(0, +)
    }
}
