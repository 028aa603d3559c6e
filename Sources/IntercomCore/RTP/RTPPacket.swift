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
        let header = try parseHeader(bytes[...])
        var csrcs: [UInt32] = []
        for index in 0..<header.csrcCount {
            csrcs.append(bytes.readBigEndianUInt32(at: fixedHeaderLength + 4 * index))
        }
        var headerExtension: RTPHeaderExtension?
        if let data = header.extensionData {
            headerExtension = RTPHeaderExtension(
                profileDefined: UInt16(bytes[data.lowerBound - 4]) << 8 | UInt16(bytes[data.lowerBound - 3]), data: Array(bytes[data])
            )
        }
        return RTPPacket(
            marker: header.marker, payloadType: header.payloadType, sequenceNumber: header.sequenceNumber,
            timestamp: header.timestamp, ssrc: header.ssrc, csrcs: csrcs, headerExtension: headerExtension,
            payload: Array(bytes[header.payload])
        )
    }

    /// Reads and checks an RTP packet's header where it lies, copying nothing: what the network
    /// thread needs to place the payload, with every check `parse` makes.
    public static func parseHeader(_ bytes: ArraySlice<UInt8>) throws(RTPParseError) -> RTPHeader {
        guard bytes.count >= fixedHeaderLength else { throw .tooShort(byteCount: bytes.count) }
        let start = bytes.startIndex
        let first = bytes[start]
        let version = first >> 6
        guard version == Self.version else { throw .wrongVersion(version) }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = bytes[start + 1]
        var position = start + fixedHeaderLength
        guard bytes.endIndex - position >= 4 * csrcCount else { throw .truncatedCSRCList(csrcCount: csrcCount) }
        position += 4 * csrcCount
        var extensionData: Range<Int>?
        if hasExtension {
            guard bytes.endIndex - position >= 4 else { throw .truncatedExtension }
            let wordCount = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            position += 4
            guard bytes.endIndex - position >= 4 * wordCount else { throw .truncatedExtension }
            extensionData = (position - start)..<(position - start + 4 * wordCount)
            position += 4 * wordCount
        }
        var end = bytes.endIndex
        if hasPadding {
            // The last octet counts the padding, itself included, so zero is malformed.
            guard end > position, let paddingCount = bytes.last, paddingCount > 0, Int(paddingCount) <= end - position else {
                throw .badPadding
            }
            end -= Int(paddingCount)
        }
        return RTPHeader(
            marker: second & 0x80 != 0, payloadType: second & 0x7F,
            sequenceNumber: UInt16(bytes[start + 2]) << 8 | UInt16(bytes[start + 3]),
            timestamp: bytes.readBigEndianUInt32(at: 4), ssrc: bytes.readBigEndianUInt32(at: 8), csrcCount: csrcCount,
            extensionData: extensionData, payload: (position - start)..<(end - start)
        )
    }

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

    /// The packet's wire bytes, without padding.
    ///
    /// - Precondition: at most 15 CSRCs.
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

/// An RTP packet's fixed header and where its parts lie, as `RTPPacket.parseHeader` read them.
/// Ranges count from the first byte of the packet.
public struct RTPHeader: Equatable, Sendable {
    public let marker: Bool
    public let payloadType: UInt8
    public let sequenceNumber: UInt16
    public let timestamp: UInt32
    public let ssrc: UInt32
    public let csrcCount: Int
    /// The header extension's data, after its 4-byte header.
    public let extensionData: Range<Int>?
    /// The payload, padding left out.
    public let payload: Range<Int>
}

extension Collection<UInt8> where Index == Int {
    /// The 32-bit big-endian number `offset` bytes from the start.
    func readBigEndianUInt32(at offset: Int) -> UInt32 {
        let at = startIndex + offset
        return UInt32(self[at]) << 24 | UInt32(self[at + 1]) << 16 | UInt32(self[at + 2]) << 8 | UInt32(self[at + 3])
    }
}
