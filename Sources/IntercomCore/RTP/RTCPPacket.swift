/// One packet of a compound RTCP datagram (RFC 3550 §6).
public enum RTCPPacket: Equatable, Sendable {
    case senderReport(RTCPSenderReport)
    case receiverReport(RTCPReceiverReport)
    case sourceDescription([SDESChunk])
    case goodbye(RTCPGoodbye)
    case application(RTCPApplicationPacket)
    /// A packet type this parser does not interpret (XR, feedback, ...), kept so the rest of
    /// the compound still parses. `count` is the 5-bit field after the padding bit.
    case unknown(packetType: UInt8, count: UInt8, body: [UInt8])

    /// RTCP packet types (RFC 3550 §12.1).
    public enum PacketType {
        public static let senderReport: UInt8 = 200
        public static let receiverReport: UInt8 = 201
        public static let sourceDescription: UInt8 = 202
        public static let goodbye: UInt8 = 203
        public static let application: UInt8 = 204
    }

    static let headerLength = 4

    /// Parses a compound RTCP datagram into its packets, in order, each copied out of it
    /// (`RTCPCompound` reads them where they lie).
    ///
    /// Every packet's header must be valid and its length must fit in the datagram.
    public static func parseCompound(_ bytes: some Collection<UInt8>) throws(RTCPParseError) -> [RTCPPacket] {
        try RTCPCompound(validating: ArraySlice(bytes)).map(RTCPPacket.init)
    }

    /// The packet a view reads, copied out of its datagram.
    public init(_ view: RTCPPacketView) {
        switch view {
        case .senderReport(let sender, let blocks):
            self = .senderReport(RTCPSenderReport(sender, blocks: blocks))
        case .receiverReport(let ssrc, let blocks):
            self = .receiverReport(RTCPReceiverReport(ssrc: ssrc, reportBlocks: Array(blocks)))
        case .sourceDescription(let chunks):
            self = .sourceDescription(chunks.map(SDESChunk.init))
        case .goodbye(let sources, let reason):
            self = .goodbye(RTCPGoodbye(sources: sources, reason: reason))
        case .application(let subtype, let ssrc, let name, let data):
            self = .application(RTCPApplicationPacket(subtype: subtype, ssrc: ssrc, name: name, data: Array(data)))
        case .unknown(let packetType, let count, let body):
            self = .unknown(packetType: packetType, count: count, body: Array(body))
        }
    }

    /// Serializes packets into one compound RTCP datagram.
    public static func serializeCompound(_ packets: [RTCPPacket]) -> [UInt8] {
        packets.reduce(into: []) { bytes, packet in packet.append(to: &bytes) }
    }

    /// The packet's wire bytes, without padding.
    ///
    /// - Precondition: at most 31 report blocks, chunks or sources, and an APP subtype below 32.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    /// `serialized()`, appended to `bytes`: with room in `bytes`, nothing is allocated (the
    /// body is written in place and the header's count and length filled in after it).
    ///
    /// - Precondition: `bytes` holds whole 32-bit words (as a compound datagram does), since the
    ///   body's parts pad themselves to word boundaries of the whole buffer.
    public func append(to bytes: inout [UInt8]) {
        let start = bytes.count
        precondition(start % 4 == 0, "an RTCP packet starts on a word boundary")
        bytes.append(contentsOf: repeatElement(0, count: Self.headerLength))
        let count: Int
        let packetType: UInt8
        switch self {
        case .senderReport(let report):
            report.appendBody(to: &bytes)
            (count, packetType) = (report.reportBlocks.count, PacketType.senderReport)
        case .receiverReport(let report):
            report.appendBody(to: &bytes)
            (count, packetType) = (report.reportBlocks.count, PacketType.receiverReport)
        case .sourceDescription(let chunks):
            for chunk in chunks { chunk.append(to: &bytes) }
            (count, packetType) = (chunks.count, PacketType.sourceDescription)
        case .goodbye(let goodbye):
            goodbye.appendBody(to: &bytes)
            (count, packetType) = (goodbye.sources.count, PacketType.goodbye)
        case .application(let application):
            application.appendBody(to: &bytes)
            (count, packetType) = (Int(application.subtype), PacketType.application)
        case .unknown(let type, let unknownCount, let unknownBody):
            bytes += unknownBody
            (count, packetType) = (Int(unknownCount), type)
        }
        precondition(count < 32, "an RTCP header counts at most 31 items")
        bytes.padToWordBoundary()
        let words = UInt16((bytes.count - start) / 4 - 1)  // length in words minus one, header included
        bytes[start] = RTPPacket.version << 6 | UInt8(count)
        bytes[start + 1] = packetType
        bytes[start + 2] = UInt8(words >> 8)
        bytes[start + 3] = UInt8(truncatingIfNeeded: words)
    }
}

/// Why bytes are not a valid compound RTCP datagram.
public enum RTCPParseError: Error, Equatable, Sendable {
    /// No bytes at all.
    case empty
    /// Fewer than the 4 bytes of a packet header remain.
    case truncatedHeader(byteCount: Int)
    /// The version field of a packet is not 2.
    case wrongVersion(UInt8)
    /// A packet's length field points past the end of the datagram.
    case lengthExceedsDatagram(declaredByteCount: Int, availableByteCount: Int)
    /// A padding count is zero or larger than the packet body.
    case badPadding
    /// A packet's body is shorter than its header's count or its fields require.
    case truncatedBody(packetType: UInt8)
}
