/// The audio format every peer uses on the wire and inside the call: 48 kHz mono
/// (RFC 7587's RTP clock). Durations in this format convert with `MediaTime`.
public enum VoiceFormat {
    public static let sampleRate = 48_000
    public static let channels = 1
    /// Samples in one millisecond at the wire rate.
    public static let samplesPerMillisecond = sampleRate / 1000
    /// Opus packets last a multiple of 2.5 ms (120 samples), up to 120 ms.
    public static let opusFrameQuantum = 120
    public static let longestOpusPacket = 5_760
    /// Samples in `milliseconds` at the wire rate (exact: 48 per millisecond).
    public static func samples(milliseconds: Int) -> Int { MediaTime.samples(milliseconds: milliseconds) }
}
