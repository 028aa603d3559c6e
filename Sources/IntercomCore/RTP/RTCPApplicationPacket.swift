/// An RTCP APP packet (RFC 3550 §6.7): application-defined data under a four-character name.
public struct RTCPApplicationPacket: Equatable, Sendable {
    /// 5 bits, below 32; meaning defined by the application.
    public var subtype: UInt8
    public var ssrc: UInt32
    public var name: RTCPApplicationName
    /// Zero-padded to a 32-bit boundary on the wire, so parsed data is always word-aligned.
    public var data: [UInt8]

    public init(subtype: UInt8, ssrc: UInt32, name: RTCPApplicationName, data: [UInt8]) {
        self.subtype = subtype
        self.ssrc = ssrc
        self.name = name
        self.data = data
    }

    func appendBody(to bytes: inout [UInt8]) {
        bytes.appendBigEndian(ssrc)
        bytes.appendBigEndian(name.rawValue)
        bytes += data
    }
}

/// The four-octet name of an APP packet, ASCII by convention.
public struct RTCPApplicationName: Hashable, Sendable, CustomStringConvertible {
    /// The four octets, first one in the high byte.
    public var rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// A name from exactly four ASCII characters, or nil.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        rawValue = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    public var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
