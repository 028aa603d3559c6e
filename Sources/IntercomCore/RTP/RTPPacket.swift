/// An RTP data packet (RFC 3550 §5.1).
///
/// Parsing removes padding; serialization never adds any. A header extension is kept as
/// opaque bytes so a packet survives a parse/serialize round trip.
public struct RTPPacket: Equatable, Sendable {
    /// For audio, set on the first packet of a talkspurt.
    public var marker: Bool
    /// The 7-bit payload type; higher bits are dropped when serializing.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// Contributing sources; at most 15 fit in the header.
    public var csrcs: [UInt32]
    public var headerExtension: RTPHeaderExtension?
    public var payload: [UInt8]

    /// The RTP version this code speaks, the only one in use (RFC 3550).
    public static let version: UInt8 = 2
    static let fixedHeaderLength = 12

    public init(
        marker: Bool = false,
        payloadType: UInt8,
        sequenceNumber: UInt16,
        timestamp: UInt32,
        ssrc: UInt32,
        csrcs: [UInt32] = [],
        headerExtension: RTPHeaderExtension? = nil,
        payload: [UInt8]
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
        self.payload = payload
    }

    /// Parses one RTP packet, throwing a typed error for anything malformed.
    public static func parse(_ bytes: some Collection<UInt8>) throws(RTPParseError) -> RTPPacket {
        let bytes = Array(bytes)
        guard bytes.count >= fixedHeaderLength else { throw .tooShort(byteCount: bytes.count) }
        var reader = ByteReader(bytes)
        let first = try reader.readUInt8(orThrow: RTPParseError.tooShort(byteCount: bytes.count))
        let version = first >> 6
        guard version == Self.version else { throw .wrongVersion(version) }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = try reader.readUInt8(orThrow: RTPParseError.tooShort(byteCount: bytes.count))
        let sequenceNumber = try reader.readUInt16(orThrow: RTPParseError.tooShort(byteCount: bytes.count))
        let timestamp = try reader.readUInt32(orThrow: RTPParseError.tooShort(byteCount: bytes.count))
        let ssrc = try reader.readUInt32(orThrow: RTPParseError.tooShort(byteCount: bytes.count))

        var csrcs: [UInt32] = []
        for _ in 0..<csrcCount {
            csrcs.append(try reader.readUInt32(orThrow: RTPParseError.truncatedCSRCList(csrcCount: csrcCount)))
        }

        var headerExtension: RTPHeaderExtension?
        if hasExtension {
            let profile = try reader.readUInt16(orThrow: RTPParseError.truncatedExtension)
            let wordCount = Int(try reader.readUInt16(orThrow: RTPParseError.truncatedExtension))
            let data = try reader.readBytes(wordCount * 4, orThrow: RTPParseError.truncatedExtension)
            headerExtension = RTPHeaderExtension(profileDefined: profile, data: data)
        }

        var payload = reader.readRemaining()
        if hasPadding {
            // The last octet counts the padding, itself included, so zero is malformed.
            guard let paddingCount = payload.last, paddingCount > 0, Int(paddingCount) <= payload.count else {
                throw .badPadding
            }
            payload.removeLast(Int(paddingCount))
        }

        return RTPPacket(
            marker: second & 0x80 != 0,
            payloadType: second & 0x7F,
            sequenceNumber: sequenceNumber,
            timestamp: timestamp,
            ssrc: ssrc,
            csrcs: csrcs,
            headerExtension: headerExtension,
            payload: payload
        )
    }

    /// The packet's wire bytes, without padding.
    ///
    /// - Precondition: at most 15 CSRCs.
    /// A packet with no CSRCs and no header extension, as the capture thread sends it, written
    /// into `bytes` (replacing what it held): with room in `bytes`, nothing is allocated.
    public static func serialize(
        marker: Bool, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        payload: ArraySlice<UInt8>, into bytes: inout [UInt8]
    ) {
        bytes.removeAll(keepingCapacity: true)
        bytes.reserveCapacity(fixedHeaderLength + payload.count)
        bytes.append(version << 6)
        bytes.append((marker ? 0x80 : 0) | payloadType & 0x7F)
        bytes.appendBigEndian(sequenceNumber)
        bytes.appendBigEndian(timestamp)
        bytes.appendBigEndian(ssrc)
        bytes += payload
    }

    public func serialized() -> [UInt8] {
        precondition(csrcs.count <= 15, "an RTP header holds at most 15 CSRCs")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.fixedHeaderLength + csrcs.count * 4 + payload.count
            + (headerExtension.map { 4 + $0.data.count + 3 } ?? 0))
        let extensionBit: UInt8 = headerExtension == nil ? 0 : 0x10
        bytes.append(Self.version << 6 | extensionBit | UInt8(csrcs.count))
        bytes.append((marker ? 0x80 : 0) | payloadType & 0x7F)
        bytes.appendBigEndian(sequenceNumber)
        bytes.appendBigEndian(timestamp)
        bytes.appendBigEndian(ssrc)
        for csrc in csrcs { bytes.appendBigEndian(csrc) }
        if let headerExtension {
            bytes.appendBigEndian(headerExtension.profileDefined)
            bytes.appendBigEndian(UInt16(headerExtension.wordCount))
            bytes += headerExtension.data
            bytes.padToWordBoundary()
        }
        bytes += payload
        return bytes
    }
}

/// The header extension of an RTP packet (RFC 3550 §5.3.1), kept as opaque bytes.
public struct RTPHeaderExtension: Equatable, Sendable {
    /// The 16 bits the profile defines (for example 0xBEDE for RFC 8285 one-byte headers).
    public var profileDefined: UInt16
    /// The extension body. It is padded with zeros to a 32-bit boundary on the wire.
    ///
    /// - Precondition: at most 65 535 words (262 140 bytes).
    public var data: [UInt8]

    public init(profileDefined: UInt16, data: [UInt8]) {
        self.profileDefined = profileDefined
        self.data = data
    }

    var wordCount: Int {
        let words = (data.count + 3) / 4
        precondition(words <= Int(UInt16.max), "an RTP header extension holds at most 65535 words")
        return words
    }
}

/// Why bytes are not a valid RTP packet.
public enum RTPParseError: Error, Equatable, Sendable {
    /// Fewer bytes than the 12-byte fixed header.
    case tooShort(byteCount: Int)
    /// The version field is not 2.
    case wrongVersion(UInt8)
    /// The header announces more CSRCs than the packet holds.
    case truncatedCSRCList(csrcCount: Int)
    /// The header extension runs past the end of the packet.
    case truncatedExtension
    /// The padding count is zero or larger than the payload.
    case badPadding
}
