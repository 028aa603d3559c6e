import CSpeexDSP

/// Owns a SpeexDSP resampler for one mono stream: any rate pair, and a fine ratio
/// adjustment on top of it for following another clock's drift.
public final class Resampler {
    public let inputRate: Int
    public let outputRate: Int
    private let state: OpaquePointer
    /// Parts per million by which the input is consumed faster than nominal.
    public private(set) var adjustmentPPM: Int = 0

    /// The fine adjustment moves in steps of 100 ppm (a ratio denominator of 10^4).
    /// libspeexdsp 1.2.1 rescales its fractional phase in 32 bits when the ratio changes and
    /// crashes with denominators near 10^6; 10^4 keeps every product in range.
    public static let adjustmentStepPPM = 100
    private static let ratioDenominator: UInt64 = 10_000

    /// - Parameters:
    ///   - quality: 0 (cheapest) ... 10 (best); 5 is transparent for speech.
    ///   - skippingZeros: leave out the output the filter's delay would start with, so that
    ///     a whole buffer comes out in step with what went in; without, every block in gives
    ///     its whole block out, `inputLatency` input samples late.
    public init(inputRate: Int, outputRate: Int, quality: Int = 5, skippingZeros: Bool = true) throws(SpeexError) {
        guard inputRate > 0, outputRate > 0 else {
            throw .invalidSetting(name: "sample rate", value: Double(min(inputRate, outputRate)))
        }
        guard (0...10).contains(quality) else { throw .invalidSetting(name: "resampler quality", value: Double(quality)) }
        var error: Int32 = 0
        guard let state = speex_resampler_init(1, UInt32(inputRate), UInt32(outputRate), Int32(quality), &error),
              error == 0 else { throw SpeexError(resamplerCode: error) }
        self.state = state
        self.inputRate = inputRate
        self.outputRate = outputRate
        if skippingZeros { speex_resampler_skip_zeros(state) }
    }

    deinit { speex_resampler_destroy(state) }

    /// Input samples the filter holds back: part of its delay.
    public var inputLatency: Int { Int(speex_resampler_get_input_latency(state)) }

    /// Consumes input about `ppm` parts per million faster (positive) or slower (negative)
    /// than the nominal rates say, keeping the filter's state. The value is rounded to the
    /// nearest `adjustmentStepPPM`; `adjustmentPPM` tells what was applied.
    public func adjust(ppm: Int) throws(SpeexError) {
        guard (-Self.largestAdjustmentPPM...Self.largestAdjustmentPPM).contains(ppm) else { throw .invalidSetting(name: "ratio adjustment (ppm)", value: Double(ppm)) }
        let steps = Int((Double(ppm) / Double(Self.adjustmentStepPPM)).rounded())
        let applied = steps * Self.adjustmentStepPPM
        guard applied != adjustmentPPM else { return }
        let g = gcd(inputRate, outputRate)
        let numerator = UInt64(inputRate / g) * UInt64(Int64(Self.ratioDenominator) + Int64(steps))
        let denominator = UInt64(outputRate / g) * Self.ratioDenominator
        let common = gcd(numerator, denominator)
        let result = speex_resampler_set_rate_frac(
            state, UInt32(numerator / common), UInt32(denominator / common), UInt32(inputRate), UInt32(outputRate)
        )
        guard result == 0 else { throw SpeexError(resamplerCode: result) }
        adjustmentPPM = applied
    }

    /// The largest adjustment `adjust(ppm:)` accepts.
    public static let largestAdjustmentPPM = 50_000

    /// Grows the filter's storage to what the largest speed-up needs, so that `adjust(ppm:)`
    /// allocates nothing later (on a real-time thread): SpeexDSP lengthens its filter when input
    /// is consumed faster than nominal, and once it has processed anything it reallocates for a
    /// filter longer than any before. Call before processing; the filter starts afresh after.
    public func reserveForAdjustment() throws(SpeexError) {
        try adjust(ppm: Self.largestAdjustmentPPM)
        // Processing marks the filter started, after which a shorter filter keeps the storage.
        var silence = [Float](repeating: 0, count: 64)
        var output = [Float](repeating: 0, count: 64)
        _ = try silence.withUnsafeMutableBufferPointer { (input) throws(SpeexError) in
            try output.withUnsafeMutableBufferPointer { (output) throws(SpeexError) in
                try process(UnsafeBufferPointer(input), into: output)
            }
        }
        try adjust(ppm: 0)
        speex_resampler_reset_mem(state)
        speex_resampler_skip_zeros(state)
    }

    /// Resamples as much of `input` as fits into `output`.
    /// - Returns: how many input samples were consumed and output samples written.
    public func process(
        _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>
    ) throws(SpeexError) -> (consumed: Int, written: Int) {
        var consumed = UInt32(input.count)
        var written = UInt32(output.count)
        let result = speex_resampler_process_float(state, 0, input.baseAddress, &consumed, output.baseAddress, &written)
        guard result == 0 else { throw SpeexError(resamplerCode: result) }
        return (Int(consumed), Int(written))
    }

    /// Resamples a whole buffer; output length follows the ratio.
    public func process(_ input: [Float]) throws(SpeexError) -> [Float] {
        let speedup = 1 + Double(adjustmentPPM) / 1_000_000
        let capacity = Int(Double(input.count * outputRate / inputRate) / speedup) + 64
        var output = [Float](repeating: 0, count: capacity)
        var consumedTotal = 0
        var writtenTotal = 0
        try input.withUnsafeBufferPointer { (inBuffer) throws(SpeexError) in
            try output.withUnsafeMutableBufferPointer { (outBuffer) throws(SpeexError) in
                while consumedTotal < inBuffer.count {
                    if writtenTotal == outBuffer.count { break }
                    let (consumed, written) = try process(
                        UnsafeBufferPointer(rebasing: inBuffer[consumedTotal...]),
                        into: UnsafeMutableBufferPointer(rebasing: outBuffer[writtenTotal...])
                    )
                    consumedTotal += consumed
                    writtenTotal += written
                    if consumed == 0 && written == 0 { break }
                }
            }
        }
        return Array(output[0..<writtenTotal])
    }
}

private func gcd<T: BinaryInteger>(_ a: T, _ b: T) -> T {
    var (a, b) = (a, b)
    while b != 0 { (a, b) = (b, a % b) }
    return a
}
