import IntercomCore

/// Which way audio flows through an ALSA device.
public enum ALSADirection: String, Sendable {
    case capture
    case playback
}

/// What a device agreed to when it was opened, and so what intercom converts at its edge to
/// and from 48 kHz mono.
public struct ALSANegotiatedFormat: Sendable, Equatable, CustomStringConvertible {
    public let direction: ALSADirection
    public let sampleRate: Int
    public let channels: Int
    public let sampleFormat: ALSASampleFormat
    /// Frames per period: the device's unit of transfer, about one voice frame.
    public let periodFrames: Int
    /// Frames the device buffers: the latency bought against underruns.
    public let bufferFrames: Int

    /// Whether the rate differs from 48 kHz, so a SpeexDSP resampler sits at the edge.
    public var isResampled: Bool { sampleRate != VoiceFormat.sampleRate }

    /// The conversions between the device and the 48 kHz mono voice path, in words for logs.
    public var conversions: [String] {
        var steps: [String] = []
        if isResampled {
            steps.append(direction == .capture
                ? "resampled \(sampleRate) → \(VoiceFormat.sampleRate) Hz"
                : "resampled \(VoiceFormat.sampleRate) → \(sampleRate) Hz")
        }
        if channels != 1 {
            steps.append(direction == .capture ? "\(channels) channels mixed to mono" : "mono copied to \(channels) channels")
        }
        if sampleFormat != .s16 { steps.append("\(sampleFormat.rawValue) samples") }
        return steps
    }

    public var description: String {
        let milliseconds = { (frames: Int) -> String in
            let tenths = (frames * 10_000 + sampleRate / 2) / sampleRate
            return "\(tenths / 10).\(tenths % 10) ms"
        }
        let conversion = conversions.isEmpty ? "no conversion" : conversions.joined(separator: ", ")
        return "\(sampleRate) Hz, \(channels) ch, \(sampleFormat.rawValue), period \(periodFrames) frames "
            + "(\(milliseconds(periodFrames))), buffer \(bufferFrames) frames (\(milliseconds(bufferFrames))); \(conversion)"
    }
}
