import IntercomCore
import Testing

@Suite("RTCP packets")
struct RTCPPacketTests {
    /// SR from 0x11223344 with one report block, then SDES with a CNAME "ab", then
    /// BYE with reason "bye", then APP "TEST" subtype 3 with one data word.
    static let compound: [UInt8] = [
        // SR: V=2, RC=1, PT=200, length 12 words + 1
        0x81, 200, 0x00, 0x0C,
        0x11, 0x22, 0x33, 0x44,  // SSRC
        0xE0, 0x00, 0x00, 0x01,  // NTP seconds
        0x80, 0x00, 0x00, 0x00,  // NTP fraction: half a second
        0x00, 0x00, 0x03, 0xC0,  // RTP timestamp 960
        0x00, 0x00, 0x00, 0x0A,  // packet count 10
        0x00, 0x00, 0x01, 0xF4,  // octet count 500
        0x55, 0x66, 0x77, 0x88,  // report block: SSRC
        0x40, 0xFF, 0xFF, 0xFE,  // fraction 64/256, cumulative lost -2
        0x00, 0x01, 0x00, 0x05,  // extended highest sequence: cycle 1, seq 5
        0x00, 0x00, 0x00, 0x30,  // jitter 48
        0x01, 0x02, 0x03, 0x04,  // LSR
        0x00, 0x00, 0x80, 0x00,  // DLSR 0.5 s
        // SDES: SC=1, length 3 words + 1
        0x81, 202, 0x00, 0x03,
        0x11, 0x22, 0x33, 0x44,
        0x01, 0x02, 0x61, 0x62,  // CNAME "ab"
        0x00, 0x00, 0x00, 0x00,  // end of list, padding
        // BYE: SC=1, length 2 words + 1
        0x81, 203, 0x00, 0x02,
        0x11, 0x22, 0x33, 0x44,
        0x03, 0x62, 0x79, 0x65,  // reason "bye"
        // APP: subtype 3, length 3 words + 1
        0x83, 204, 0x00, 0x03,
        0x11, 0x22, 0x33, 0x44,
        0x54, 0x45, 0x53, 0x54,  // "TEST"
        0xCA, 0xFE, 0xBA, 0xBE,
    ]

    static let expectedPackets: [RTCPPacket] = [
        .senderReport(RTCPSenderReport(
            ssrc: 0x1122_3344, ntpTimestamp: NTPTimestamp(seconds: 0xE000_0001, fraction: 0x8000_0000),
            rtpTimestamp: 960, packetCount: 10, octetCount: 500,
            reportBlocks: [ReportBlock(
                ssrc: 0x5566_7788, fractionLost: 64, cumulativeLost: -2, extendedHighestSequence: 0x0001_0005,
                jitter: 48, lastSenderReport: 0x0102_0304, delaySinceLastSenderReport: 0x8000)])),
        .sourceDescription([SDESChunk(ssrc: 0x1122_3344, items: [.canonicalName("ab")])]),
        .goodbye(RTCPGoodbye(sources: [0x1122_3344], reason: "bye")),
        .application(RTCPApplicationPacket(
            subtype: 3, ssrc: 0x1122_3344, name: RTCPApplicationName("TEST")!, data: [0xCA, 0xFE, 0xBA, 0xBE])),
    ]

    @Test func parsesAHandWrittenCompound() throws {
        #expect(try RTCPPacket.parseCompound(Self.compound) == Self.expectedPackets)
    }

    /// The network thread reads a compound where it lies in a larger buffer (after a
    /// transport header): positions and the SDES alignment count from the compound's start.
    @Test func readsACompoundWhereItLiesInALargerBuffer() throws {
        let buffer: [UInt8] = [9, 9, 9, 9, 9, 9] + Self.compound + [7, 7]
        let compound = try RTCPCompound(validating: buffer[6..<6 + Self.compound.count])
        #expect(compound.map(RTCPPacket.init) == Self.expectedPackets)
        var seen = 0
        for case .sourceDescription(let chunks) in compound {
            for chunk in chunks {
                #expect(chunk.ssrc == 0x1122_3344)
                #expect(chunk.map(\.type) == [1])
                #expect(chunk.map { Array($0.value) } == [[0x61, 0x62]])
                seen += 1
            }
        }
        #expect(seen == 1)
        #expect(throws: RTCPParseError.lengthExceedsDatagram(declaredByteCount: 16, availableByteCount: 8)) {
            try RTCPCompound(validating: buffer[6..<6 + 60])
        }
    }

    @Test func serializesToTheSameBytes() {
        #expect(RTCPPacket.serializeCompound(Self.expectedPackets) == Self.compound)
    }

    @Test(arguments: [
        RTCPPacket.receiverReport(RTCPReceiverReport(ssrc: 1)),
        .receiverReport(RTCPReceiverReport(ssrc: 9, reportBlocks: (0..<31).map {
            ReportBlock(ssrc: $0, fractionLost: UInt8($0), cumulativeLost: Int32($0) - 15,
                        extendedHighestSequence: $0 << 16, jitter: $0, lastSenderReport: $0, delaySinceLastSenderReport: $0)
        })),
        .sourceDescription([
            SDESChunk(ssrc: 1, items: []),
            SDESChunk(ssrc: 2, items: [.canonicalName("peer@host"), .name("Zoë"), .other(type: 6, value: [1, 2, 3])]),
        ]),
        .goodbye(RTCPGoodbye(sources: [])),
        .goodbye(RTCPGoodbye(sources: [1, 2, 3], reason: "")),
        .application(RTCPApplicationPacket(subtype: 31, ssrc: 5, name: RTCPApplicationName("ICOM")!, data: [])),
        .unknown(packetType: 207, count: 0, body: [1, 2, 3, 4]),
    ])
    func roundTrips(packet: RTCPPacket) throws {
        #expect(try RTCPPacket.parseCompound(packet.serialized()) == [packet])
    }

    @Test func clampsCumulativeLossToTwentyFourBits() throws {
        let block = { (lost: Int32) in
            RTCPPacket.receiverReport(RTCPReceiverReport(ssrc: 1, reportBlocks: [ReportBlock(
                ssrc: 2, fractionLost: 0, cumulativeLost: lost, extendedHighestSequence: 0,
                jitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)]))
        }
        let reparsedLoss = { (lost: Int32) throws -> Int32? in
            guard case .receiverReport(let report) = try RTCPPacket.parseCompound(block(lost).serialized()).first
            else { return nil }
            return report.reportBlocks.first?.cumulativeLost
        }
        #expect(try reparsedLoss(10_000_000) == 8_388_607)
        #expect(try reparsedLoss(-10_000_000) == -8_388_608)
        #expect(try reparsedLoss(-1) == -1)
    }

    @Test func cutsLongTextToTheFieldSize() throws {
        let long = String(repeating: "é", count: 200)  // 400 UTF-8 bytes
        let bytes = RTCPPacket.goodbye(RTCPGoodbye(sources: [1], reason: long)).serialized()
        guard case .goodbye(let goodbye) = try RTCPPacket.parseCompound(bytes).first else {
            Issue.record("not a BYE")
            return
        }
        #expect(goodbye.reason == String(repeating: "é", count: 127))
    }

    @Test func removesPadding() throws {
        // RR with P=1: four bytes of padding, the last one counting them.
        let bytes: [UInt8] = [0xA0, 201, 0x00, 0x02, 0, 0, 0, 7, 0, 0, 0, 4]
        #expect(try RTCPPacket.parseCompound(bytes) == [.receiverReport(RTCPReceiverReport(ssrc: 7))])
    }

    @Test func rejectsMalformedCompounds() {
        #expect(throws: RTCPParseError.empty) { try RTCPPacket.parseCompound([UInt8]()) }
        #expect(throws: RTCPParseError.truncatedHeader(byteCount: 3)) { try RTCPPacket.parseCompound([0x80, 201, 0]) }
        #expect(throws: RTCPParseError.wrongVersion(3)) { try RTCPPacket.parseCompound([0xC0, 201, 0, 1, 0, 0, 0, 1]) }
        #expect(throws: RTCPParseError.lengthExceedsDatagram(declaredByteCount: 12, availableByteCount: 8)) {
            try RTCPPacket.parseCompound([0x80, 201, 0, 2, 0, 0, 0, 1])
        }
        #expect(throws: RTCPParseError.badPadding) { try RTCPPacket.parseCompound([0xA0, 201, 0, 1, 0, 0, 0, 0]) }
        #expect(throws: RTCPParseError.badPadding) { try RTCPPacket.parseCompound([0xA0, 201, 0, 1, 0, 0, 0, 5]) }
        // RR announcing one report block but carrying none.
        #expect(throws: RTCPParseError.truncatedBody(packetType: 201)) {
            try RTCPPacket.parseCompound([0x81, 201, 0, 1, 0, 0, 0, 1])
        }
        // SDES whose item list has no terminating null octet.
        #expect(throws: RTCPParseError.truncatedBody(packetType: 202)) {
            try RTCPPacket.parseCompound([0x81, 202, 0, 2, 0, 0, 0, 1, 1, 2, 0x61, 0x62])
        }
    }

    @Test func everyTruncationOfACompoundThrows() {
        for length in 0..<Self.compound.count where length % 4 != 0 || !Self.packetBoundaries.contains(length) {
            #expect(throws: RTCPParseError.self, "length \(length)") {
                try RTCPPacket.parseCompound(Self.compound.prefix(length))
            }
        }
    }

    /// Cutting exactly after a packet leaves a shorter valid compound.
    static let packetBoundaries: Set<Int> = [52, 68, 80]

    @Test func applicationNamesAreFourASCIICharacters() {
        #expect(RTCPApplicationName("ICOM")?.description == "ICOM")
        #expect(RTCPApplicationName("ICO") == nil)
        #expect(RTCPApplicationName("ICOMM") == nil)
        #expect(RTCPApplicationName("ICÖ") == nil)
    }
}
