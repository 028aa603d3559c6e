/// An RTCP sender report (RFC 3550 §6.4.1). Profile-specific extensions are not kept.
public struct RTCPSenderReport: Equatable, Sendable {
    public var ssrc: UInt32
    /// The wallclock time when the report was sent.
    public var ntpTimestamp: NTPTimestamp
    /// The same instant in the RTP timestamp units of the sender's stream.
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    /// At most 31.
    public var reportBlocks: [ReportBlock]

    public init(
        ssrc: UInt32, ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32,
        packetCount: UInt32, octetCount: UInt32, reportBlocks: [ReportBlock] = []
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reportBlocks = reportBlocks
    }

    init(_ sender: RTCPSenderInfo, blocks: RTCPReportBlocks) {
        self.init(
            ssrc: sender.ssrc, ntpTimestamp: sender.ntpTimestamp, rtpTimestamp: sender.rtpTimestamp,
            packetCount: sender.packetCount, octetCount: sender.octetCount, reportBlocks: Array(blocks)
        )
    }

    func appendBody(to bytes: inout [UInt8]) {
        bytes.appendBigEndian(ssrc)
        bytes.appendBigEndian(ntpTimestamp.seconds)
        bytes.appendBigEndian(ntpTimestamp.fraction)
        bytes.appendBigEndian(rtpTimestamp)
        bytes.appendBigEndian(packetCount)
        bytes.appendBigEndian(octetCount)
        for block in reportBlocks { block.append(to: &bytes) }
    }
}

/// An RTCP receiver report (RFC 3550 §6.4.2). Profile-specific extensions are not kept.
public struct RTCPReceiverReport: Equatable, Sendable {
    public var ssrc: UInt32
    /// At most 31.
    public var reportBlocks: [ReportBlock]

    public init(ssrc: UInt32, reportBlocks: [ReportBlock] = []) {
        self.ssrc = ssrc
        self.reportBlocks = reportBlocks
    }


    func appendBody(to bytes: inout [UInt8]) {
        bytes.appendBigEndian(ssrc)
        for block in reportBlocks { block.append(to: &bytes) }
    }
}

/// One reception report block of an SR or RR (RFC 3550 §6.4.1).
public struct ReportBlock: Equatable, Sendable {
    /// The source this block reports on.
    public var ssrc: UInt32
    /// Packets lost since the previous report, as a fraction of 256.
    public var fractionLost: UInt8
    /// Packets lost since reception began; a 24-bit signed field, so it is clamped to
    /// -8 388 608...8 388 607 on the wire. Negative when duplicates outnumber losses.
    public var cumulativeLost: Int32
    /// Cycles of the sequence number in the high 16 bits, the highest sequence number in the low 16.
    public var extendedHighestSequence: UInt32
    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32
    /// The middle 32 bits of the NTP timestamp of the last SR received from the source, or 0.
    public var lastSenderReport: UInt32
    /// The delay since that SR was received, in units of 1/65536 s, or 0.
    public var delaySinceLastSenderReport: UInt32

    static let byteCount = 24
    static let cumulativeLostRange: ClosedRange<Int32> = -(1 << 23)...((1 << 23) - 1)

    public init(
        ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequence: UInt32,
        jitter: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// Reads a block from a reader that holds at least `byteCount` bytes.
    init(reading reader: inout ByteReader) {
        precondition(reader.remainingCount >= Self.byteCount, "a report block is 24 bytes")
        func word() -> UInt32 { (try? reader.readUInt32(orThrow: RTCPParseError.empty)) ?? 0 }
        ssrc = word()
        let lossWord = word()
        fractionLost = UInt8(lossWord >> 24)
        // Shifting the 24-bit field to the top and back sign-extends it.
        cumulativeLost = Int32(bitPattern: lossWord << 8) >> 8
        extendedHighestSequence = word()
        jitter = word()
        lastSenderReport = word()
        delaySinceLastSenderReport = word()
    }

    func append(to bytes: inout [UInt8]) {
        let clampedLost = min(max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        bytes.appendBigEndian(ssrc)
        bytes.appendBigEndian(UInt32(fractionLost) << 24 | UInt32(bitPattern: clampedLost) & 0x00FF_FFFF)
        bytes.appendBigEndian(extendedHighestSequence)
        bytes.appendBigEndian(jitter)
        bytes.appendBigEndian(lastSenderReport)
        bytes.appendBigEndian(delaySinceLastSenderReport)
    }
}
