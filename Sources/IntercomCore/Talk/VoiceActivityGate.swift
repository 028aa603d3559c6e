/// Opens on detected speech and stays open for a hang-over after it, so that the pauses
/// between words and the soft ends of sentences are sent rather than clipped.
public struct VoiceActivityGate: Sendable {
    /// How long the gate stays open after the last frame with speech.
    public let hangoverNanoseconds: UInt64
    private var lastSpeech: UInt64?

    public init(hangoverNanoseconds: UInt64 = 400_000_000) {
        self.hangoverNanoseconds = hangoverNanoseconds
    }

    /// Feeds the detector's verdict on the frame captured at `now`; returns whether to transmit it.
    public mutating func isOpen(speech: Bool, now: UInt64) -> Bool {
        if speech { lastSpeech = now }
        guard let lastSpeech else { return false }
        return now - lastSpeech <= hangoverNanoseconds
    }
}
