/// Keeps the talk key's own click out of what is sent, and nothing else: pressing the key (a
/// space bar, a push button) clicks into the microphone just as transmission starts, louder
/// than the speech that follows (the acoustic lab's talk key peaks about 30 dB over a
/// keyboard's RMS), while speech already under way at the press must go out from the press on,
/// with no delay added.
///
/// The guard hears every frame, the gate shut or open. In 2.5 ms blocks it measures the energy
/// of the signal's first difference (a click is a broadband burst, mostly above 1 kHz, where
/// voiced speech has little) and keeps a background: that energy's peak, held and falling
/// 30 dB a second, so that it stays near the level of speech under way through the pauses
/// between its syllables. A block 10 dB or more over the background starts a burst; while a
/// burst lasts the background does not follow it, so a click that began before the key's
/// event reached the capture thread is still measured against the room before it. A burst is
/// taken for speech, not a click, once it has lasted as long as a click (its tenth block,
/// 25 ms), or when, from its fourth block (7.5 ms) on, a block is within 3 dB of the burst's
/// loudest, in the difference's energy or in the signal's own (a click has decayed by then;
/// speech is rising or held); from then on the background follows it again.
///
/// For the first 60 ms after the gate opens, each block of a burst not taken for speech is
/// brought down to the background's level (the gain falls at once and rises back over one
/// block); the first burst taken for speech ends the guard for that press. Speech under way at
/// the press has set the background, so it passes untouched. A word starting in the window
/// loses its first 7.5 ms to the guard (brought down to the room's level, the next 2.5 ms
/// faded back in), or up to 25 ms when its start is as short and decaying as a click. A click
/// standing less than 10 dB over the recent speech's peaks above 1 kHz passes. The key's
/// release comes after the gate has closed.
///
/// Cost: two multiply-adds a sample, a multiply a sample while it attenuates; no allocation.
public struct TalkKeyClickGuard: Sendable {
    /// How long after the gate opens a burst may be taken for the key's click.
    public static let windowMilliseconds = 60
    /// The longest burst taken for a click (in its last block the gain rises back).
    public static let clickMilliseconds = 25
    /// A burst still within 3 dB of its loudest block in its fourth block (7.5-10 ms after it
    /// began) or later is speech.
    public static let riseBlocks = 3
    /// The block the guard measures and attenuates: 2.5 ms.
    public static let blockSamples = 120
    /// How far over the background a block's energy starts a burst: 10 dB.
    public static let jump: Float = 10
    /// What the background is multiplied by each block: 30 dB a second (10^(-0.0075)).
    public static let fall: Float = 0.982_879
    /// The lowest background, 70 dB under full scale (of the difference signal's energy): a
    /// click in digital silence is brought down to this, not to nothing.
    public static let floor: Float = 1e-7

    private let windowBlocks: Int
    /// The bursts of the first difference's energy (full scale = 1).
    private var burst: ClickBurst
    /// The frame's last sample, for the first difference across frames.
    private var lastSample: Float = 0
    /// Blocks left in the guard's window after the gate opened; 0 when it is not guarding.
    private var remaining = 0
    private var wasOpen = false
    /// The gain the last block ended with.
    private var gain: Float = 1

    public init(
        windowMilliseconds: Int = TalkKeyClickGuard.windowMilliseconds,
        clickMilliseconds: Int = TalkKeyClickGuard.clickMilliseconds
    ) {
        func blocks(_ milliseconds: Int) -> Int {
            let samples = milliseconds * VoiceFormat.sampleRate / 1000
            return (samples + Self.blockSamples - 1) / Self.blockSamples
        }
        windowBlocks = blocks(windowMilliseconds)
        burst = ClickBurst(
            jump: Self.jump, stay: Self.jump, fall: Self.fall, floor: Self.floor,
            clickBlocks: blocks(clickMilliseconds), riseBlocks: Self.riseBlocks
        )
    }

    /// Follows the next frame and, in the first 60 ms after the gate opens, brings the key's
    /// click down; `open` is whether the talk key's gate sends this frame.
    public mutating func process(_ frame: inout [Int16], open: Bool) {
        if open && !wasOpen { remaining = windowBlocks }
        if !open {
            remaining = 0
            gain = 1
        }
        wasOpen = open
        frame.withUnsafeMutableBufferPointer { samples in
            var start = 0
            while start < samples.count {
                let end = min(start + Self.blockSamples, samples.count)
                processBlock(samples, start..<end, open: open)
                start = end
            }
        }
    }

    private mutating func processBlock(_ samples: UnsafeMutableBufferPointer<Int16>, _ block: Range<Int>, open: Bool) {
        var sum: Float = 0
        var plainSum: Float = 0
        var previous = lastSample
        for i in block {
            let x = Float(samples[i])
            let difference = x - previous
            sum += difference * difference
            plainSum += x * x
            previous = x
        }
        lastSample = previous
        let energy = sum / Float(block.count) / (32_768 * 32_768)
        let plain = plainSum / Float(block.count) / (32_768 * 32_768)
        let (reference, hot) = burst.observe(energy: energy, plain: plain)

        guard open else { return }
        var target: Float = 1
        if remaining > 0 {
            remaining -= 1
            if hot && burst.isSpeech {
                remaining = 0
            } else if hot {
                target = (reference / energy).squareRoot()
            }
        }
        if target < gain {
            for i in block { samples[i] = Int16((Float(samples[i]) * target).rounded()) }
        } else if gain < 1 {
            let step = (target - gain) / Float(block.count)
            var g = gain
            for i in block {
                g += step
                samples[i] = Int16((Float(samples[i]) * g).rounded())
            }
        }
        gain = target
    }
}
