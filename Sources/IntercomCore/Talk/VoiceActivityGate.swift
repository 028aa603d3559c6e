/// Opens on detected speech and stays open for a hang-over after it, so that the pauses
/// between words and the soft ends of sentences are sent rather than clipped; with a
/// pre-roll, what it gates is the audio of `prerollNanoseconds` ago, so that the start of a
/// word, heard before the detector was sure of it, is sent too.
///
/// The caller delays the audio it gates by the pre-roll (`PrerollLine`); the gate then
/// opens for a frame when speech was detected anywhere from the hang-over before that frame
/// was captured to now, the pre-roll after it.
public struct VoiceActivityGate: Sendable {
    /// VOX's: 300 ms of hang-over, 120 ms of pre-roll (the lab's words lost more than 25 ms
    /// of their onset in 1–4 cases of 10 with 50–100 ms, none or one with 120 ms).
    public static let vox = VoiceActivityGate(hangoverNanoseconds: MediaTime.nanoseconds(.milliseconds(300)), prerollNanoseconds: MediaTime.nanoseconds(.milliseconds(120)))

    /// How long the gate stays open after the last frame with speech.
    public let hangoverNanoseconds: UInt64
    /// How far behind the detector the gated audio runs.
    public let prerollNanoseconds: UInt64
    private var lastSpeech: UInt64?

    public init(hangoverNanoseconds: UInt64 = MediaTime.nanoseconds(.milliseconds(300)), prerollNanoseconds: UInt64 = 0) {
        self.hangoverNanoseconds = hangoverNanoseconds
        self.prerollNanoseconds = prerollNanoseconds
    }

    /// Feeds the detector's verdict on the frame captured at `now`; returns whether to transmit
    /// the frame captured `delayNanoseconds` before it (the pre-roll line's delay at this turn,
    /// the whole pre-roll unless it has shrunk).
    public mutating func isOpen(speech: Bool, now: UInt64, delayNanoseconds: UInt64? = nil) -> Bool {
        if speech { lastSpeech = now }
        guard let lastSpeech else { return false }
        return now - lastSpeech <= hangoverNanoseconds + (delayNanoseconds ?? prerollNanoseconds)
    }
}

/// VOX's pre-roll on the send path: frames come out up to `capacity` turns after they went
/// in, so that the start of a word, heard before the detector was sure of it, is sent. While
/// the gate sends, each pause that comes in (a frame the detector calls neither voiced nor
/// above the noise) is dropped instead of queued, so the delay shrinks to nothing within the
/// first pauses of a talkspurt, five milliseconds of pause at a time, and the rest of it goes
/// out as soon as it is said; while the gate is shut, the line fills up again with what the
/// microphone hears. Each frame carries a tag (the caller's frame number) so that a caller
/// can tell which frame came out. Its storage is made once; nothing is allocated per frame.
public struct PrerollLine: Sendable {
    private var slots: [[Int16]]
    private var tags: [Int]
    /// The oldest frame's slot.
    private var oldest = 0
    /// Frames held: the delay, in turns, of what comes out next.
    public private(set) var count = 0

    public init(frames: Int, frameSamples: Int) {
        slots = [[Int16]](repeating: [Int16](repeating: 0, count: frameSamples), count: max(0, frames))
        tags = [Int](repeating: 0, count: max(0, frames))
    }

    public var capacity: Int { slots.count }

    /// Takes `frame` (tagged `tag`) and puts in its place the frame to send when `sending`;
    /// returns that frame's tag. A `pause` that comes in while sending is dropped when frames
    /// are held (the delay shrinks by one); when nothing is held, frames pass straight through.
    /// While not sending, the frame is queued (the oldest dropped when full) and `frame` is
    /// left as it was: it is not sent.
    @discardableResult
    public mutating func pass(_ frame: inout [Int16], tag: Int, sending: Bool, pause: Bool) -> Int {
        guard capacity > 0 else { return tag }
        if sending {
            guard count > 0 else { return tag }
            let out = oldest
            let outTag = tags[out]
            oldest = (oldest + 1) % capacity
            if pause {
                count -= 1
                swapContents(of: out, with: &frame)
            } else {
                // The new frame goes in after the newest: into the slot just emptied when the
                // line is full, else into the free slot after the newest.
                let tail = (out + count) % capacity
                swapContents(of: out, with: &frame)
                if tail != out { slots.swapAt(out, tail) }
                tags[tail] = tag
            }
            return outTag
        }
        if count == capacity {
            oldest = (oldest + 1) % capacity
            count -= 1
        }
        let tail = (oldest + count) % capacity
        copy(frame, into: tail)
        tags[tail] = tag
        count += 1
        return tag
    }

    /// Exchanges the samples of slot `index` and `frame` (the same length) without allocating.
    private mutating func swapContents(of index: Int, with frame: inout [Int16]) {
        slots[index].withUnsafeMutableBufferPointer { slot in
            frame.withUnsafeMutableBufferPointer { current in
                for i in 0..<min(slot.count, current.count) {
                    let held = slot[i]
                    slot[i] = current[i]
                    current[i] = held
                }
            }
        }
    }

    private mutating func copy(_ frame: [Int16], into index: Int) {
        slots[index].withUnsafeMutableBufferPointer { slot in
            for i in 0..<min(slot.count, frame.count) { slot[i] = frame[i] }
        }
    }
}
