/// Opens on detected speech and stays open for a hang-over after it, so that the pauses
/// between words and the soft ends of sentences are sent rather than clipped; with a
/// pre-roll, what it gates is the audio of `prerollNanoseconds` ago, so that the start of a
/// word, heard before the detector was sure of it, is sent too.
///
/// The caller delays the audio it gates by the pre-roll (`FrameDelayLine`); the gate then
/// opens for a frame when speech was detected anywhere from the hang-over before that frame
/// was captured to now, the pre-roll after it.
public struct VoiceActivityGate: Sendable {
    /// VOX's: 300 ms of hang-over, 120 ms of pre-roll (the lab's words lost more than 25 ms
    /// of their onset in 1–4 cases of 10 with 50–100 ms, none or one with 120 ms).
    public static let vox = VoiceActivityGate(hangoverNanoseconds: 300_000_000, prerollNanoseconds: 120_000_000)

    /// How long the gate stays open after the last frame with speech.
    public let hangoverNanoseconds: UInt64
    /// How far behind the detector the gated audio runs.
    public let prerollNanoseconds: UInt64
    private var lastSpeech: UInt64?

    public init(hangoverNanoseconds: UInt64 = 300_000_000, prerollNanoseconds: UInt64 = 0) {
        self.hangoverNanoseconds = hangoverNanoseconds
        self.prerollNanoseconds = prerollNanoseconds
    }

    /// Feeds the detector's verdict on the frame captured at `now`; returns whether to transmit
    /// the frame captured `prerollNanoseconds` before it.
    public mutating func isOpen(speech: Bool, now: UInt64) -> Bool {
        if speech { lastSpeech = now }
        guard let lastSpeech else { return false }
        return now - lastSpeech <= hangoverNanoseconds + prerollNanoseconds
    }
}

/// A fixed delay of whole frames for the send path (VOX's pre-roll): each frame put through
/// comes out as the one put through `frames` turns earlier (silence at first). Its storage is
/// made once; nothing is allocated per frame.
public struct FrameDelayLine: Sendable {
    private var slots: [[Int16]]
    private var next = 0

    public init(frames: Int, frameSamples: Int) {
        slots = [[Int16]](repeating: [Int16](repeating: 0, count: frameSamples), count: max(0, frames))
    }

    public var frames: Int { slots.count }

    /// Stores `frame`; when `delayed`, replaces it with the frame stored `frames` turns ago.
    public mutating func pass(_ frame: inout [Int16], delayed: Bool) {
        guard !slots.isEmpty else { return }
        let index = next
        next = (next + 1) % slots.count
        slots[index].withUnsafeMutableBufferPointer { slot in
            frame.withUnsafeMutableBufferPointer { current in
                for i in 0..<min(slot.count, current.count) {
                    let old = slot[i]
                    slot[i] = current[i]
                    if delayed { current[i] = old }
                }
            }
        }
    }
}
