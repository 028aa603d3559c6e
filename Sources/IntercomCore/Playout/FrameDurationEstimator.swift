/// Learns the stream's frame duration from the timestamp step between consecutive sequence numbers.
///
/// A step counts only if it is a legal Opus packet duration and is seen twice in a row, so a
/// DTX gap (contiguous sequence numbers, timestamps jumping) does not pass for a frame length.
struct FrameDurationEstimator: Sendable {
    /// Current frame duration in 48 kHz samples.
    private(set) var samples: Int64
    private var previous: (sequenceNumber: Int64, timestamp: Int64)?
    private var candidate: Int64?

    init(initialSamples: Int) {
        samples = Int64(initialSamples)
    }

    /// Observes a newly arrived packet.
    mutating func record(sequenceNumber: Int64, timestamp: Int64) {
        defer {
            if sequenceNumber > previous?.sequenceNumber ?? .min {
                previous = (sequenceNumber, timestamp)
            }
        }
        guard let previous, sequenceNumber == previous.sequenceNumber + 1 else { return }
        let step = timestamp - previous.timestamp
        guard step > 0, step <= VoiceFormat.longestOpusPacket, step % Int64(VoiceFormat.opusFrameQuantum) == 0 else { return }
        if step == candidate { samples = step }
        candidate = step
    }
}
