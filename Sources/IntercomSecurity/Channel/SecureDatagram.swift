import IntercomCore

/// What an encrypted call puts on the wire, each in one UDP datagram. The first byte is a
/// type below 0x40, so these never parse as RTP or RTCP (whose version bits make it 0x80–0xBF).
///
///     0      1      2      4                8
///     type   ver.   0 0    index            rest
///
/// - initiation (1): sender index, then Noise XX message 1 (the ephemeral key and zero padding,
///   so that it is never shorter than the response a stranger can draw with it), then a 16-byte
///   MAC under the cookie the responder gave this address (zeros without one);
/// - response (2): sender index, receiver index, then Noise message 2;
/// - finish (3): receiver index, then Noise message 3;
/// - RTP (4) and RTCP (5): receiver index, a 64-bit packet counter (the AEAD nonce), then one
///   RTP or RTCP packet sealed with ChaCha20-Poly1305 under that direction's key for the kind,
///   the 16 header bytes as associated data;
/// - cookie reply (6): the initiation's sender index, a 16-byte cookie for the initiation's
///   source address, and a 16-byte tag binding it to that initiation (`SecureChannel`).
public enum SecureDatagram: Equatable, Sendable {
    case initiation(senderIndex: UInt32, message: [UInt8])
    case response(senderIndex: UInt32, receiverIndex: UInt32, message: [UInt8])
    case finish(receiverIndex: UInt32, message: [UInt8])
    case transport(kind: TransportKind, receiverIndex: UInt32, counter: UInt64, sealed: ArraySlice<UInt8>)
    case cookieReply(receiverIndex: UInt32, cookie: [UInt8], tag: [UInt8])

    public enum TransportKind: UInt8, Sendable, CaseIterable {
        case rtp = 4
        case rtcp = 5
    }

    /// The frame version: 2 since the initiation carries a cookie MAC (its padding 16 bytes
    /// shorter) and cookie replies exist. Version 1 builds cannot handshake with this one;
    /// `otherVersion` tells their frames apart from junk, so that the user can be told why.
    public static let version: UInt8 = 2
    public static let transportHeaderLength = 16
    /// Noise message 1 padded with zeros in its (clear) payload.
    public static let initiationPayloadLength = 72
    /// The MAC an initiation ends with, and a cookie's length.
    public static let cookieLength = 16
    public static let initiationLength = 8 + NoiseXXHandshake.messageLength(1, payloadLength: initiationPayloadLength) + cookieLength
    public static let cookieReplyLength = 8 + 2 * cookieLength
    public static let responseLength = 12 + NoiseXXHandshake.messageLength(2, payloadLength: 0)
    public static let finishLength = 8 + NoiseXXHandshake.messageLength(3, payloadLength: 0)
    /// What encryption adds to each RTP or RTCP packet.
    public static let transportOverhead = transportHeaderLength + NoiseXXHandshake.tagLength

    /// Whether a datagram is one of ours rather than plain RTP/RTCP.
    public static func isSecure(_ bytes: some Collection<UInt8>) -> Bool {
        guard let first = bytes.first else { return false }
        return first >= 1 && first <= 6
    }

    /// The version of a frame that is one of ours by its type and header but of another
    /// version (an older or newer build), else nil. Its other bytes mean nothing to us.
    public static func otherVersion(_ bytes: ArraySlice<UInt8>) -> UInt8? {
        guard bytes.count >= 4, isSecure(bytes) else { return nil }
        let base = bytes.startIndex
        let version = bytes[base + 1]
        guard version != Self.version, bytes[base + 2] == 0, bytes[base + 3] == 0 else { return nil }
        return version
    }

    /// Parses with every length checked; nil for anything that is not exactly one of the forms.
    public init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 8 else { return nil }
        let base = bytes.startIndex
        guard bytes[base + 1] == Self.version, bytes[base + 2] == 0, bytes[base + 3] == 0 else { return nil }
        let index = Self.readUInt32(bytes, at: base + 4)
        switch bytes[base] {
        case 1:
            guard bytes.count == Self.initiationLength else { return nil }
            // The MAC is read from the datagram by the channel; the message is what Noise reads.
            self = .initiation(senderIndex: index, message: Array(bytes[(base + 8)..<(base + Self.initiationLength - Self.cookieLength)]))
        case 2:
            guard bytes.count == Self.responseLength else { return nil }
            self = .response(senderIndex: index, receiverIndex: Self.readUInt32(bytes, at: base + 8), message: Array(bytes[(base + 12)...]))
        case 3:
            guard bytes.count == Self.finishLength else { return nil }
            self = .finish(receiverIndex: index, message: Array(bytes[(base + 8)...]))
        case 6:
            guard bytes.count == Self.cookieReplyLength else { return nil }
            let cookieStart = base + 8, tagStart = cookieStart + Self.cookieLength
            self = .cookieReply(receiverIndex: index, cookie: Array(bytes[cookieStart..<tagStart]), tag: Array(bytes[tagStart...]))
        case let type:
            guard let kind = TransportKind(rawValue: type), bytes.count >= Self.transportOverhead else { return nil }
            let counter = UInt64(Self.readUInt32(bytes, at: base + 8)) << 32 | UInt64(Self.readUInt32(bytes, at: base + 12))
            self = .transport(kind: kind, receiverIndex: index, counter: counter, sealed: bytes[(base + 16)...])
        }
    }

    public func serialized() -> [UInt8] {
        switch self {
        case .initiation(let sender, let message):
            Self.header(1, sender) + message + [UInt8](repeating: 0, count: Self.cookieLength)
        case .response(let sender, let receiver, let message):
            Self.header(2, sender) + Self.bigEndian(receiver) + message
        case .finish(let receiver, let message):
            Self.header(3, receiver) + message
        case .transport(let kind, let receiver, let counter, let sealed):
            Self.transportHeader(kind, receiver, counter) + sealed
        case .cookieReply(let receiver, let cookie, let tag):
            Self.header(6, receiver) + cookie + tag
        }
    }

    static func transportHeader(_ kind: TransportKind, _ receiver: UInt32, _ counter: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(transportHeaderLength)
        appendTransportHeader(kind, receiver, counter, to: &out)
        return out
    }

    /// `transportHeader`, appended to `out` (with room in it, nothing is allocated).
    static func appendTransportHeader(_ kind: TransportKind, _ receiver: UInt32, _ counter: UInt64, to out: inout [UInt8]) {
        out.append(kind.rawValue)
        out.append(version)
        out.append(0)
        out.append(0)
        func appendBigEndian(_ value: UInt32) {
            out.append(UInt8(value >> 24))
            out.append(UInt8(truncatingIfNeeded: value >> 16))
            out.append(UInt8(truncatingIfNeeded: value >> 8))
            out.append(UInt8(truncatingIfNeeded: value))
        }
        appendBigEndian(receiver)
        appendBigEndian(UInt32(truncatingIfNeeded: counter >> 32))
        appendBigEndian(UInt32(truncatingIfNeeded: counter))
    }

    private static func header(_ type: UInt8, _ index: UInt32) -> [UInt8] {
        [type, version, 0, 0] + bigEndian(index)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    private static func readUInt32(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8 | UInt32(bytes[index + 3])
    }
}
