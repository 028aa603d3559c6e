import IntercomDSP

extension Resampler {
    /// Resamples all of `input` through `scratch` (kept by the stream, so nothing is allocated),
    /// handing each converted piece to `deliver` as it comes.
    func resampleAll(
        _ input: UnsafeBufferPointer<Float>, through scratch: UnsafeMutableBufferPointer<Float>,
        _ deliver: (UnsafeBufferPointer<Float>) throws(ALSAStreamFailure) -> Void
    ) throws(ALSAStreamFailure) {
        var consumed = 0
        while consumed < input.count {
            let step: (consumed: Int, written: Int)
            do {
                step = try process(UnsafeBufferPointer(rebasing: input[consumed...]), into: scratch)
            } catch {
                throw .conversion(error)
            }
            try deliver(UnsafeBufferPointer(rebasing: scratch[..<step.written]))
            consumed += step.consumed
            if step.consumed == 0 && step.written == 0 { break }
        }
    }
}
