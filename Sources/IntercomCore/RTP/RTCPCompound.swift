/// A compound RTCP datagram (RFC 3550 §6) read where it lies.
///
/// Making one checks every packet of it, as `RTCPPacket.parseCompound` does (that parser is
/// built on this one); walking it then copies nothing, so the network thread reads its peers'
/// reports without allocating. The RFC 3550 A.2 rule that a compound starts with SR or RR is
/// not enforced, so reduced-size RTCP (RFC 5506) is accepted.
public struct RTCPCompound: Sequence, Sendable {
    public let bytes: ArraySlice<UInt8>

    public init(validating bytes: ArraySlice<UInt8>) throws(RTCPParseError) {
        guard !bytes.isEmpty else { throw .empty }
        self.bytes = bytes
        var walk = PacketWalk(bytes)
        while try walk.next() != nil {}
    }

    public func makeIterator() -> Iterator { Iterator(walk: PacketWalk(bytes)) }

    public struct Iterator: IteratorProtocol {
        fileprivate var walk: PacketWalk

        /// Cannot fail: the compound was checked whole when it was made.
        public mutating func next() -> RTCPPacketView? { try? walk.next() }
    }

    /// Reads one packet after another, header and body.
    fileprivate struct PacketWalk {
        let bytes: ArraySlice<UInt8>
        var start = 0

        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

        mutating func next() throws(RTCPParseError) -> RTCPPacketView? {
            guard start < bytes.count else { return nil }
            let available = bytes.count - start
            var header = ByteReader(bytes, range: start..<bytes.count)
            let truncatedHeader = RTCPParseError.truncatedHeader(byteCount: available)
            let first = try header.readUInt8(orThrow: truncatedHeader)
            let packetType = try header.readUInt8(orThrow: truncatedHeader)
            let lengthInWordsMinusOne = try header.readUInt16(orThrow: truncatedHeader)
            let version = first >> 6
            guard version == RTPPacket.version else { throw .wrongVersion(version) }
            let packetLength = (Int(lengthInWordsMinusOne) + 1) * 4
            guard packetLength <= available else {
                throw .lengthExceedsDatagram(declaredByteCount: packetLength, availableByteCount: available)
            }
            var bodyEnd = start + packetLength
            if first & 0x20 != 0 {
                // The last octet counts the padding, itself included.
                let paddingCount = Int(bytes[bytes.startIndex + bodyEnd - 1])
                guard paddingCount > 0, paddingCount <= packetLength - RTCPPacket.headerLength else { throw .badPadding }
                bodyEnd -= paddingCount
            }
            var body = ByteReader(bytes, range: start + RTCPPacket.headerLength..<bodyEnd)
            start += packetLength
            return try RTCPPacketView(body: &body, packetType: packetType, count: Int(first & 0x1F))
        }
    }
}

/// One packet of an `RTCPCompound`, its variable parts left in the datagram.
public enum RTCPPacketView: Sendable {
    case senderReport(RTCPSenderInfo, blocks: RTCPReportBlocks)
    case receiverReport(ssrc: UInt32, blocks: RTCPReportBlocks)
    case sourceDescription(SDESChunkList)
    /// `reason` is UTF-8 as sent, unchecked.
    case goodbye(sources: RTCPSourceList, reason: ArraySlice<UInt8>?)
    case application(subtype: UInt8, ssrc: UInt32, name: RTCPApplicationName, data: ArraySlice<UInt8>)
    /// A packet type this parser does not interpret (XR, feedback, ...), kept so the rest of
    /// the compound still parses. `count` is the 5-bit field after the padding bit.
    case unknown(packetType: UInt8, count: UInt8, body: ArraySlice<UInt8>)

    fileprivate init(body: inout ByteReader, packetType: UInt8, count: Int) throws(RTCPParseError) {
        let truncated = RTCPParseError.truncatedBody(packetType: packetType)
        switch packetType {
        case RTCPPacket.PacketType.senderReport:
            let ssrc = try body.readUInt32(orThrow: truncated)
            let ntpSeconds = try body.readUInt32(orThrow: truncated)
            let ntpFraction = try body.readUInt32(orThrow: truncated)
            let sender = RTCPSenderInfo(
                ssrc: ssrc, ntpTimestamp: NTPTimestamp(seconds: ntpSeconds, fraction: ntpFraction),
                rtpTimestamp: try body.readUInt32(orThrow: truncated),
                packetCount: try body.readUInt32(orThrow: truncated),
                octetCount: try body.readUInt32(orThrow: truncated)
            )
            self = .senderReport(sender, blocks: RTCPReportBlocks(try body.readSlice(count * ReportBlock.byteCount, orThrow: truncated)))
        case RTCPPacket.PacketType.receiverReport:
            let ssrc = try body.readUInt32(orThrow: truncated)
            self = .receiverReport(ssrc: ssrc, blocks: RTCPReportBlocks(try body.readSlice(count * ReportBlock.byteCount, orThrow: truncated)))
        case RTCPPacket.PacketType.sourceDescription:
            self = .sourceDescription(try SDESChunkList(body: &body, chunkCount: count))
        case RTCPPacket.PacketType.goodbye:
            let sources = RTCPSourceList(try body.readSlice(count * 4, orThrow: truncated))
            var reason: ArraySlice<UInt8>?
            if body.remainingCount > 0 {
                reason = try body.readSlice(Int(try body.readUInt8(orThrow: truncated)), orThrow: truncated)
            }
            self = .goodbye(sources: sources, reason: reason)
        case RTCPPacket.PacketType.application:
            let ssrc = try body.readUInt32(orThrow: truncated)
            let name = RTCPApplicationName(rawValue: try body.readUInt32(orThrow: truncated))
            self = .application(subtype: UInt8(count), ssrc: ssrc, name: name, data: body.readRemaining())
        default:
            self = .unknown(packetType: packetType, count: UInt8(count), body: body.readRemaining())
        }
    }
}

/// The sender's part of an SR (RFC 3550 §6.4.1), before its report blocks.
public struct RTCPSenderInfo: Equatable, Sendable {
    public var ssrc: UInt32
    /// The wallclock time when the report was sent.
    public var ntpTimestamp: NTPTimestamp
    /// The same instant in the RTP timestamp units of the sender's stream.
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
}

/// The report blocks of an SR or RR, read from the datagram as they are asked for.
public struct RTCPReportBlocks: RandomAccessCollection, Sendable {
    private let bytes: ArraySlice<UInt8>

    /// `bytes` holds whole blocks.
    fileprivate init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    public var startIndex: Int { 0 }
    public var endIndex: Int { bytes.count / ReportBlock.byteCount }

    public subscript(index: Int) -> ReportBlock {
        var reader = ByteReader(bytes, range: index * ReportBlock.byteCount..<(index + 1) * ReportBlock.byteCount)
        return ReportBlock(reading: &reader)
    }
}

/// The sources of a BYE, read from the datagram as they are asked for.
public struct RTCPSourceList: RandomAccessCollection, Sendable {
    private let bytes: ArraySlice<UInt8>

    /// `bytes` holds whole 32-bit words.
    fileprivate init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    public var startIndex: Int { 0 }
    public var endIndex: Int { bytes.count / 4 }

    public subscript(index: Int) -> UInt32 {
        var reader = ByteReader(bytes, range: index * 4..<index * 4 + 4)
        return (try? reader.readUInt32(orThrow: RTCPParseError.empty)) ?? 0
    }
}

/// The chunks of an SDES packet, each a source and its items, checked when made.
public struct SDESChunkList: Sequence, Sendable {
    private let bytes: ArraySlice<UInt8>
    private let chunkCount: Int

    fileprivate init(body: inout ByteReader, chunkCount: Int) throws(RTCPParseError) {
        let start = body.position
        for _ in 0..<chunkCount { try Self.skipChunk(&body) }
        self.bytes = body.slice(start..<body.position)
        self.chunkCount = chunkCount
    }

    /// The null item is followed by null octets up to the next 32-bit boundary; chunks start
    /// aligned, so the chunk list's own alignment is the compound's.
    private static func skipChunk(_ body: inout ByteReader) throws(RTCPParseError) {
        let truncated = RTCPParseError.truncatedBody(packetType: RTCPPacket.PacketType.sourceDescription)
        _ = try body.readUInt32(orThrow: truncated)
        while true {
            let type = try body.readUInt8(orThrow: truncated)
            if type == SDESItem.endOfList {
                try body.skip((4 - body.position % 4) % 4, orThrow: truncated)
                return
            }
            try body.skip(Int(try body.readUInt8(orThrow: truncated)), orThrow: truncated)
        }
    }

    public func makeIterator() -> Iterator { Iterator(reader: ByteReader(bytes), remaining: chunkCount) }

    public struct Iterator: IteratorProtocol {
        fileprivate var reader: ByteReader
        fileprivate var remaining: Int

        public mutating func next() -> SDESChunkView? {
            guard remaining > 0 else { return nil }
            remaining -= 1
            let start = reader.position
            guard (try? SDESChunkList.skipChunk(&reader)) != nil else { return nil }
            return SDESChunkView(bytes: reader.slice(start..<reader.position))
        }
    }
}

/// One chunk of an SDES packet: a source and the items describing it.
public struct SDESChunkView: Sequence, Sendable {
    /// The chunk, from its SSRC to its last null octet.
    fileprivate let bytes: ArraySlice<UInt8>

    public var ssrc: UInt32 {
        var reader = ByteReader(bytes)
        return (try? reader.readUInt32(orThrow: RTCPParseError.empty)) ?? 0
    }

    public func makeIterator() -> Iterator {
        Iterator(reader: ByteReader(bytes, range: 4..<bytes.count))
    }

    /// The items, in order.
    public struct Iterator: IteratorProtocol {
        fileprivate var reader: ByteReader

        public mutating func next() -> SDESItemView? {
            guard let type = try? reader.readUInt8(orThrow: RTCPParseError.empty), type != SDESItem.endOfList,
                  let length = try? reader.readUInt8(orThrow: RTCPParseError.empty),
                  let value = try? reader.readSlice(Int(length), orThrow: RTCPParseError.empty)
            else { return nil }
            return SDESItemView(type: type, value: value)
        }
    }
}

/// An SDES item as sent: its type (1 CNAME, 2 NAME, ...) and its value, UTF-8 for text, unchecked.
public struct SDESItemView: Equatable, Sendable {
    public var type: UInt8
    public var value: ArraySlice<UInt8>

    public var isCanonicalName: Bool { type == SDESItem.canonicalNameType }
    public var isName: Bool { type == SDESItem.nameType }
}
