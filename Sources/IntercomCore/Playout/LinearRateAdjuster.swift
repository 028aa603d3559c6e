/// A `RateAdjuster` by linear interpolation, carrying the fractional read position between calls.
///
/// Cheap and dependency-free: a fallback when no better resampler is available, and a reference in tests.
/// It reads one sample beyond the last one it consumes, so give it `ceil(count × ratio) + 2` input samples.
public final class LinearRateAdjuster: RateAdjuster {
    /// Fractional position of the next output sample between input 0 and input 1 of the next call.
    private var phase: Double = 0

    /// Creates an adjuster at phase 0.
    public init() {}

    /// Produces `output.count` samples from `input` at `ratio` input samples per output sample; returns the input consumed.
    public func adjust(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, ratio: Double) -> Int {
        guard let lastIndex = input.indices.last else {
            output.update(repeating: 0)
            return 0
        }
        let start = phase
        for outputIndex in output.indices {
            let position = start + Double(outputIndex) * ratio
            // Short input (the caller gave too little) holds the last sample rather than reading past it.
            let index = Int(position)
            guard index < lastIndex else {
                output[outputIndex] = input[lastIndex]
                continue
            }
            let current = input[index]
            output[outputIndex] = current + (input[index + 1] - current) * Float(position - Double(index))
        }
        let end = start + Double(output.count) * ratio
        let whole = Int(end)
        phase = end - Double(whole)
        return min(whole, input.count)
    }
}
