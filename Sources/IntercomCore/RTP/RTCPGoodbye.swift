/// An RTCP BYE packet (RFC 3550 §6.6): the sources are leaving, optionally saying why.
public struct RTCPGoodbye: Equatable, Sendable {
    /// At most 31.
    public var sources: [UInt32]
    /// UTF-8, cut to 255 bytes on the wire.
    public var reason: String?

    public init(sources: [UInt32], reason: String? = nil) {
        self.sources = sources
        self.reason = reason
    }

    init(body: inout ByteReader, sourceCount: Int) throws(RTCPParseError) {
        let truncated = RTCPParseError.truncatedBody(packetType: RTCPPacket.PacketType.goodbye)
        sources = []
        for _ in 0..<sourceCount {
            sources.append(try body.readUInt32(orThrow: truncated))
        }
        if body.remainingCount > 0 {
            let length = Int(try body.readUInt8(orThrow: truncated))
            reason = String(decoding: try body.readBytes(length, orThrow: truncated), as: UTF8.self)
        } else {
            reason = nil
        }
    }

    func appendBody(to bytes: inout [UInt8]) {
        for source in sources { bytes.appendBigEndian(source) }
        if let reason {
            let text = reason.utf8Prefix(maximumByteCount: 255)
            bytes.append(UInt8(text.count))
            bytes += text
        }
    }
}
