/// Keeps the talk key's own click out of what is sent: pressing the key (a space bar, a push
/// button) clicks into the microphone just as transmission starts, louder than the speech
/// that follows (the acoustic lab's talk key peaks about 30 dB over a keyboard's RMS). The
/// first `muteSamples` after the gate opens are silenced and the next `fadeSamples` faded in:
/// people start talking a few hundred ms after they press.
///
/// 60 ms of silence cover a click of up to 25 ms heard a sound card's period or two before
/// the key's event reached the capture thread; its release comes after the gate closed.
public struct TalkKeyClickGuard: Sendable {
    public static let muteMilliseconds = 60
    public static let fadeMilliseconds = 10

    private let muteSamples: Int
    private let fadeSamples: Int
    /// Samples since the gate opened, or nil while it is shut or once the guard is over.
    private var elapsed: Int?

    public init(
        muteSamples: Int = MediaTime.samples(milliseconds: TalkKeyClickGuard.muteMilliseconds),
        fadeSamples: Int = MediaTime.samples(milliseconds: TalkKeyClickGuard.fadeMilliseconds)
    ) {
        self.muteSamples = muteSamples
        self.fadeSamples = max(1, fadeSamples)
    }

    /// Applies the guard to the next frame; `open` is whether the talk key's gate sends it.
    public mutating func process(_ frame: inout [Int16], open: Bool) {
        guard open else {
            elapsed = 0
            return
        }
        guard var position = elapsed else { return }
        frame.withUnsafeMutableBufferPointer { samples in
            for i in samples.indices {
                if position < muteSamples {
                    samples[i] = 0
                } else if position < muteSamples + fadeSamples {
                    samples[i] = Int16(Float(samples[i]) * Float(position - muteSamples) / Float(fadeSamples))
                }
                position += 1
            }
        }
        elapsed = position < muteSamples + fadeSamples ? position : nil
    }
}
