import IntercomCore

/// Takes the microphone's speech band (below 8 kHz) down to 16 kHz for the cleaning stages and
/// puts the cleaned band back into 48 kHz with the band above it.
///
/// SpeexDSP's canceller and preprocessor cost in proportion to the samples they see a second
/// (the canceller to its filter's taps, the echo tail times the rate): at 48 kHz they were 43 %
/// of a full-duplex peer's instructions. At 16 kHz they see a third of the samples. What lies
/// above 8 kHz (a sibilant's top, a fan's hiss, the echo's top) is not cleaned sample by
/// sample but follows the speech band: each block it is scaled by the gain the cleaning gave
/// the speech band (its output's level against its input's), so it falls with the echo and the
/// noise the band lost and rises with the AGC's gain. WebRTC's audio processing treats what
/// lies above its 16 kHz band the same way.
///
/// The high band is the microphone less its speech band taken down and up again, so with the
/// cleaning doing nothing (a gain of 1) the microphone comes out whole, `delaySamples` later:
/// the resamplers' filters and the cleaning's own block. Allocates nothing after `init`.
public final class SpeechBand {
    /// The rate the cleaning runs at.
    public static let rate = 16_000
    /// SpeexDSP's resampler quality: 1, filters of 16 taps at 16 kHz, 0.5 ms of delay each way.
    /// The bands sum back to the microphone whatever the filters (the high band is what the
    /// speech band's round trip left out), so a short filter costs only where the bands cross
    /// (its passband ends at 85 % of 8 kHz, 6.8 kHz, where quality 3's ends at 7.2): in the acoustic lab quality 1
    /// scored as well as 3 with 2 ms less delay (Docs/benchmarks.md, "The cleaning at 16 kHz").
    static let quality = 1
    /// The most the high band is raised: the AGC's largest gain (20 dB).
    static let largestGain: Float = 10

    /// One block at 48 kHz, and the same at 16 kHz.
    public let wideSamples: Int
    public let bandSamples: Int
    /// Down to 16 kHz and up again, in 48 kHz samples.
    public let resamplingDelaySamples: Int
    /// From the microphone to `join`'s output, in 48 kHz samples: the resamplers and the
    /// cleaning's block (SpeexDSP's preprocessor gives each block out one block later).
    public var delaySamples: Int { resamplingDelaySamples + wideSamples }

    private let microphoneDown: Resampler
    private let referenceDown: Resampler
    private let microphoneUp: Resampler
    private let cleanedUp: Resampler
    private let predictionUp: Resampler
    /// The microphone's speech band at 16 kHz, and the far end's, of the last `split`.
    public var microphoneBand: UnsafeBufferPointer<Int16> { UnsafeBufferPointer(microphoneBandBuffer) }
    public var referenceBand: UnsafeBufferPointer<Int16> { UnsafeBufferPointer(referenceBandBuffer) }
    /// The microphone delayed as the resamplers delay its speech band: what the echo
    /// prediction (`prediction`) is of.
    public var delayedMicrophone: UnsafeBufferPointer<Int16> { UnsafeBufferPointer(delayedMicrophoneBuffer) }
    /// The canceller's prediction of the echo (`cancelled`), back at 48 kHz, `resamplingDelaySamples` late.
    public var prediction: UnsafeBufferPointer<Int16> { UnsafeBufferPointer(predictionBuffer) }

    private let microphoneBandBuffer: UnsafeMutableBufferPointer<Int16>
    private let referenceBandBuffer: UnsafeMutableBufferPointer<Int16>
    private let delayedMicrophoneBuffer: UnsafeMutableBufferPointer<Int16>
    private let predictionBuffer: UnsafeMutableBufferPointer<Int16>
    /// The speech band's energy in the block before the last `split`: what the cleaning's
    /// output of this block came from.
    private var previousBandEnergy: Float = 0
    /// The high band of the last block, and of the one before (what `join` adds).
    private let highBand: UnsafeMutableBufferPointer<Float>
    private let heldHighBand: UnsafeMutableBufferPointer<Float>
    /// The microphone's last `resamplingDelaySamples + wideSamples`, a ring.
    private let delayLine: UnsafeMutableBufferPointer<Float>
    private var delayLineStart = 0
    private var gain: Float = 1
    private let wide: UnsafeMutableBufferPointer<Float>
    private let band: UnsafeMutableBufferPointer<Float>

    /// For blocks of `blockLength` at 48 kHz: a whole number of 16 kHz samples.
    public init(blockLength: FrameLength) throws(SpeexError) {
        wideSamples = blockLength.samples
        bandSamples = blockLength.samples(atRate: Self.rate)
        guard bandSamples * VoiceFormat.sampleRate == wideSamples * Self.rate else {
            throw .invalidSetting(name: "speech band block (samples)", value: Double(wideSamples))
        }
        func resampler(_ from: Int, _ to: Int) throws(SpeexError) -> Resampler {
            try Resampler(inputRate: from, outputRate: to, quality: Self.quality, skippingZeros: false)
        }
        microphoneDown = try resampler(VoiceFormat.sampleRate, Self.rate)
        referenceDown = try resampler(VoiceFormat.sampleRate, Self.rate)
        microphoneUp = try resampler(Self.rate, VoiceFormat.sampleRate)
        cleanedUp = try resampler(Self.rate, VoiceFormat.sampleRate)
        predictionUp = try resampler(Self.rate, VoiceFormat.sampleRate)
        resamplingDelaySamples = microphoneDown.inputLatency + VoiceFormat.sampleRate / Self.rate * microphoneUp.inputLatency
        func zeros<T: Numeric>(_ count: Int, _: T.Type) -> UnsafeMutableBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: count)
            buffer.initialize(repeating: 0)
            return buffer
        }
        microphoneBandBuffer = zeros(bandSamples, Int16.self)
        referenceBandBuffer = zeros(bandSamples, Int16.self)
        delayedMicrophoneBuffer = zeros(wideSamples, Int16.self)
        predictionBuffer = zeros(wideSamples, Int16.self)
        highBand = zeros(wideSamples, Float.self)
        heldHighBand = zeros(wideSamples, Float.self)
        delayLine = zeros(resamplingDelaySamples + wideSamples, Float.self)
        wide = zeros(wideSamples, Float.self)
        band = zeros(bandSamples, Float.self)
    }

    deinit {
        for buffer in [microphoneBandBuffer, referenceBandBuffer, delayedMicrophoneBuffer, predictionBuffer] { buffer.deallocate() }
        for buffer in [highBand, heldHighBand, delayLine, wide, band] { buffer.deallocate() }
    }

    /// Takes a block of the microphone and of what the speaker played (nil: no echo to
    /// cancel) down to `microphoneBand` and `referenceBand`, and keeps the microphone's high
    /// band for `join`.
    public func split(_ microphone: UnsafeBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>?) throws(SpeexError) {
        precondition(microphone.count == wideSamples)
        previousBandEnergy = 0
        for sample in microphoneBandBuffer { previousBandEnergy += Float(sample) * Float(sample) }
        for index in 0..<wideSamples { wide[index] = Float(microphone[index]) }
        try resample(microphoneDown, from: wide, to: band)
        for index in 0..<bandSamples { microphoneBandBuffer[index] = Self.sample(band[index]) }
        // The speech band up again is what the high band is not.
        try resample(microphoneUp, from: band, to: highBand)
        let count = delayLine.count
        for index in 0..<wideSamples { delayLine[(delayLineStart + index) % count] = wide[index] }
        delayLineStart = (delayLineStart + wideSamples) % count
        // From the ring's oldest sample on: `resamplingDelaySamples` behind the block just
        // written, the microphone as its speech band came back.
        for index in 0..<wideSamples {
            let delayed = delayLine[(delayLineStart + index) % count]
            delayedMicrophoneBuffer[index] = Self.sample(delayed)
            highBand[index] = delayed - highBand[index]
        }
        if let reference {
            precondition(reference.count == wideSamples)
            for index in 0..<wideSamples { wide[index] = Float(reference[index]) }
            try resample(referenceDown, from: wide, to: band)
            for index in 0..<bandSamples { referenceBandBuffer[index] = Self.sample(band[index]) }
        }
    }

    /// Takes the canceller's output of the last `split`'s speech band (`microphoneBand` less
    /// its echo) and keeps the echo it predicted, at 48 kHz, in `prediction`.
    public func cancelled(_ output: UnsafeBufferPointer<Int16>) throws(SpeexError) {
        precondition(output.count == bandSamples)
        for index in 0..<bandSamples { band[index] = Float(microphoneBandBuffer[index]) - Float(output[index]) }
        try resample(predictionUp, from: band, to: wide)
        for index in 0..<wideSamples { predictionBuffer[index] = Self.sample(wide[index]) }
    }

    /// Puts the cleaned speech band (`cleaned`: the cleaning's output of the last `split`,
    /// which is of the block before) back at 48 kHz into `output`, with that block's high band
    /// scaled as the cleaning scaled its speech band (the gain glides there over the block).
    public func join(_ cleaned: UnsafeBufferPointer<Int16>, into output: UnsafeMutableBufferPointer<Int16>) throws(SpeexError) {
        precondition(cleaned.count == bandSamples && output.count == wideSamples)
        var cleanedEnergy: Float = 0
        for index in 0..<bandSamples {
            band[index] = Float(cleaned[index])
            cleanedEnergy += band[index] * band[index]
        }
        // A floor of about −90 dBFS: silence in, silence out, the gain left at 1.
        let floor = Float(bandSamples)
        let target = min(Self.largestGain, ((cleanedEnergy + floor) / (previousBandEnergy + floor)).squareRoot())
        try resample(cleanedUp, from: band, to: wide)
        let step = (target - gain) / Float(wideSamples)
        var g = gain
        for index in 0..<wideSamples {
            g += step
            output[index] = Self.sample(wide[index] + g * heldHighBand[index])
        }
        gain = target
        for index in 0..<wideSamples { heldHighBand[index] = highBand[index] }
    }

    private static func sample(_ value: Float) -> Int16 {
        Int16(max(-32_768, min(32_767, value.rounded())))
    }

    private func resample(_ resampler: Resampler, from input: UnsafeMutableBufferPointer<Float>,
                          to output: UnsafeMutableBufferPointer<Float>) throws(SpeexError) {
        let (consumed, written) = try resampler.process(UnsafeBufferPointer(input), into: output)
        precondition(consumed == input.count && written == output.count, "a whole-ratio resampler takes and gives whole blocks")
    }
}
