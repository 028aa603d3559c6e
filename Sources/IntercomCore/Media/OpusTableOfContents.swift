/// What an Opus packet's table-of-contents byte (RFC 6716 §3.1) tells without decoding it:
/// how long the packet plays (the jitter buffer places each packet by its own length, since a
/// sender may change frame length from one packet to the next) and whether it can carry
/// in-band FEC.
public enum OpusTableOfContents {
    /// Whether `packet`'s frames are SILK or hybrid, the modes whose frames may carry in-band
    /// FEC (LBRR) for the frame before; CELT-only frames never do (RFC 6716 §2.1.7, §4.2.4).
    public static func mayCarryFEC(_ packet: some Collection<UInt8>) -> Bool {
        guard let toc = packet.first else { return false }
        return toc >> 3 < 16
    }

    /// Samples at 48 kHz that `packet` decodes to; nil for an empty packet, or a code-3 packet
    /// without its frame count or over RFC 6716's 120 ms.
    public static func samples(of packet: some Collection<UInt8>) -> Int? {
        guard let toc = packet.first else { return nil }
        let configuration = Int(toc >> 3)
        // No table literals: this runs for every received packet, on threads that must not allocate.
        let frameSamples: Int
        switch configuration {
        case 0..<12:  // SILK: 10, 20, 40, 60 ms
            frameSamples = configuration % 4 == 3 ? 2_880 : 480 << (configuration % 4)
        case 12..<16:  // hybrid: 10, 20 ms
            frameSamples = 480 << (configuration % 2)
        default:  // CELT: 2.5, 5, 10, 20 ms
            frameSamples = 120 << (configuration % 4)
        }
        let frames: Int
        switch toc & 0x03 {
        case 0: frames = 1
        case 1, 2: frames = 2
        default:
            guard packet.count >= 2 else { return nil }
            frames = Int(packet[packet.index(after: packet.startIndex)] & 0x3F)
        }
        let samples = frames * frameSamples
        guard samples > 0, samples <= VoiceFormat.longestOpusPacket else { return nil }
        return samples
    }
}
