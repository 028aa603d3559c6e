import IntercomCore

/// A preset of the codec and the sound cards' period for the machine a call runs on;
/// `--frame-ms` and `--bitrate` given with it still win.
public enum AudioProfile: String, CaseIterable, Sendable {
    /// The adaptive codec at its bitrate: 5 ms frames of low-delay CELT while someone speaks on
    /// a clean link, 10 ms with FEC otherwise.
    case standard
    /// For a Raspberry Pi or a busy Wi-Fi: fixed 20 ms frames with FEC at 48 kb/s, a quarter of
    /// the packets of the low-delay path and about 77 kb/s on the wire instead of about 195.
    /// Through the codec alone, 20 ms frames at 48 kb/s score PESQ-WB 4.30 against 4.41 for the
    /// standard robust encoder at 96 kb/s (10 ms frames); each frame waits 15 ms longer to
    /// fill than a low-delay one. The sound cards run 10 ms periods: half the device threads'
    /// wake-ups (Docs/raspberry-pi.md).
    case pi

    /// The frame length it fixes; nil where the codec adapts.
    public var frameMilliseconds: Int? {
        switch self {
        case .standard: nil
        case .pi: 20
        }
    }

    /// The bitrate it sets; nil for the encoder's own default.
    public var bitrate: Int? {
        switch self {
        case .standard: nil
        case .pi: 48_000
        }
    }

    /// The longest sound-card period (`CallConfiguration.longestDevicePeriod`).
    public var longestDevicePeriod: FrameLength {
        switch self {
        case .standard: .milliseconds(5)
        case .pi: .milliseconds(10)
        }
    }
}
