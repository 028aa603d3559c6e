/// Takes keyboard clicks out of the microphone, all through the call: a laptop's keys are
/// centimetres from its microphone, and SpeexDSP's denoiser, which follows a stationary noise,
/// does not touch them (in the acoustic lab's keyboard scene at 5 dB SNR it gained nothing).
///
/// The signal is split in two at 1 kHz: a low band (a second-order low-pass) and the rest (the
/// signal less the low band, so that the two add up to the signal exactly). A key's click is a
/// burst of a few milliseconds ringing between 1 and 5 kHz; voiced speech has most of its
/// energy in the low band. In 1 ms blocks each band's energy is measured against a background:
/// its peak, held and falling 120 dB a second (fast enough that the next click of a burst of
/// typing, 90-250 ms on, stands out of the last one's; slow enough to stay near speech under
/// way between its syllables). A block whose high band is 10 dB or more over its background
/// starts a burst. It is a voice starting, not a click, when the low band rose with it (to
/// within 10 dB of the high band's rise); otherwise it is taken for a click until it proves to
/// be speech: when it has lasted as long as no click does (25 ms), or when from its third
/// block on a block is within 3 dB of the burst's loudest, in the high band or in the whole
/// signal (a click's ring has decayed by then; a fricative is rising or held). A click lasts
/// while its high band stays 3 dB or more over the background it started from, which does not
/// follow it.
///
/// While a click lasts, its high band is brought down to the background's level (the gain
/// falls at once and rises back over one block); the low band passes as it is. So a click
/// between words is gone, a click over speech leaves the speech below 1 kHz, and a word
/// starting with a fricative or a plosive loses at most its first two milliseconds above 1
/// kHz. Tuned in the acoustic lab (Docs/acoustic-lab.md, "Keyboard clicks").
///
/// Cost: a biquad and three multiply-adds a sample; no allocation, for the capture thread.
public struct KeyClickSuppressor: Sendable {
    /// The block measured and attenuated: 1 ms.
    public static let blockSamples = 48
    /// Where the low band ends.
    public static let splitHz: Float = 1_000
    /// How far over the background a block's high band starts a burst: 10 dB.
    public static let jump: Float = 10
    /// How far over the background it must stay for a click to go on: 3 dB.
    public static let stay: Float = 2
    /// A burst whose low band rose to within this of the high band's rise is a voice: 10 dB.
    public static let voicedRise: Float = 10
    /// What the backgrounds are multiplied by each block: 120 dB a second (10^(-0.012)).
    public static let fall: Float = 0.972_747
    /// The lowest background, 80 dB under full scale: a click in digital silence is brought
    /// down to this, not to nothing.
    public static let floor: Float = 1e-8
    /// The longest burst taken for a click.
    public static let clickBlocks = 25
    /// A burst still within 3 dB of its loudest block from its third block on is speech.
    public static let riseBlocks = 2

    private var lowPass = Biquad.lowPass(cutoff: KeyClickSuppressor.splitHz)
    /// The bursts of the high band's energy (full scale = 1).
    private var burst = ClickBurst(
        jump: KeyClickSuppressor.jump, stay: KeyClickSuppressor.stay, fall: KeyClickSuppressor.fall,
        floor: KeyClickSuppressor.floor, clickBlocks: KeyClickSuppressor.clickBlocks,
        riseBlocks: KeyClickSuppressor.riseBlocks, voicedRise: KeyClickSuppressor.voicedRise
    )
    /// The low band's energy peak, held and falling as the high band's background does.
    private var lowBackground: Float?
    /// The high band's gain the last block ended with.
    private var gain: Float = 1
    /// A block's two bands.
    private var low = [Float](repeating: 0, count: KeyClickSuppressor.blockSamples)
    private var high = [Float](repeating: 0, count: KeyClickSuppressor.blockSamples)

    public init() {}

    /// Takes the clicks out of `samples` in place.
    public mutating func process(_ samples: UnsafeMutableBufferPointer<Int16>) {
        var start = 0
        while start < samples.count {
            let end = min(start + Self.blockSamples, samples.count)
            processBlock(samples, start..<end)
            start = end
        }
    }

    private mutating func processBlock(_ samples: UnsafeMutableBufferPointer<Int16>, _ block: Range<Int>) {
        var highSum: Float = 0
        var lowSum: Float = 0
        var plainSum: Float = 0
        for (offset, index) in block.enumerated() {
            let x = Float(samples[index])
            let lowSample = lowPass.process(x)
            let highSample = x - lowSample
            low[offset] = lowSample
            high[offset] = highSample
            highSum += highSample * highSample
            lowSum += lowSample * lowSample
            plainSum += x * x
        }
        let scale = Float(block.count) * 32_768 * 32_768
        let energy = highSum / scale
        let plain = plainSum / scale
        let lowEnergy = lowSum / scale
        let lowHeld = lowBackground ?? lowEnergy
        lowBackground = max(lowHeld * Self.fall, lowEnergy)
        let (reference, hot) = burst.observe(
            energy: energy, plain: plain, lowBandRise: lowEnergy / max(lowHeld, Self.floor)
        )

        let target: Float = hot && !burst.isSpeech ? (reference / energy).squareRoot() : 1
        guard target < 1 || gain < 1 else { return }
        // Falls at once, rises back over the block.
        let step = target < gain ? 0 : (target - gain) / Float(block.count)
        var g = target < gain ? target : gain
        for (offset, index) in block.enumerated() {
            g += step
            samples[index] = Int16(clamping: Int((low[offset] + g * high[offset]).rounded()))
        }
        gain = target
    }
}
