import IntercomCore
import IntercomDSP

/// The drift-correction stage of a receive chain: SpeexDSP's resampler at 48 kHz → 48 kHz,
/// whose ratio is nudged in parts per million to play the sender's clock on ours.
final class ResamplingRateAdjuster: RateAdjuster {
    private let resampler: Resampler

    init(resampler: Resampler) {
        self.resampler = resampler
    }

    /// The SpeexDSP stage, or linear interpolation should SpeexDSP fail to allocate.
    static func make() -> any RateAdjuster {
        guard let resampler = try? Resampler(inputRate: VoiceFormat.sampleRate, outputRate: VoiceFormat.sampleRate, quality: 4),
              (try? resampler.reserveForAdjustment()) != nil else {
            return LinearRateAdjuster()
        }
        return ResamplingRateAdjuster(resampler: resampler)
    }

    func adjust(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, ratio: Double) -> Int {
        // The resampler ignores requests that round to the step it already has.
        if ratio.isFinite { try? resampler.adjust(ppm: Int(((ratio - 1) * 1_000_000).rounded())) }
        guard let (consumed, written) = try? resampler.process(input, into: output) else {
            output.update(repeating: 0)
            return input.count
        }
        // Short input leaves the rest of the period silent rather than stale.
        if written < output.count {
            UnsafeMutableBufferPointer(rebasing: output[written...]).update(repeating: 0)
        }
        return consumed
    }
}
