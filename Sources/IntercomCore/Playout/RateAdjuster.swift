/// Resamples by a ratio close to 1, to play a stream slightly faster or slower than it was sent.
public protocol RateAdjuster: AnyObject {
    /// Produces exactly output.count samples from the front of input at `ratio` input samples per output sample; returns how many input samples it consumed.
    func adjust(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, ratio: Double) -> Int
}
