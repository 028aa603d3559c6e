import IntercomCore
import Testing

@Suite("RTP packets")
struct RTPPacketTests {
    /// V=2, M=1, PT=96, seq 0x1234, ts 0xDEADBEEF, SSRC 0x01020304, three payload bytes.
    static let minimalPacket: [UInt8] = [
        0x80, 0xE0, 0x12, 0x34,
        0xDE, 0xAD, 0xBE, 0xEF,
        0x01, 0x02, 0x03, 0x04,
        0xAA, 0xBB, 0xCC,
    ]

    /// V=2, P=1, X=1, CC=2, M=0, PT=11, two CSRCs, a one-word extension, two payload
    /// bytes and three bytes of padding.
    static let fullPacket: [UInt8] = [
        0xB2, 0x0B, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x03,
        0x11, 0x11, 0x11, 0x11,
        0x22, 0x22, 0x22, 0x22,
        0xBE, 0xDE, 0x00, 0x01,
        0x01, 0x02, 0x03, 0x04,
        0x09, 0x09,
        0x00, 0x00, 0x03,
    ]
    /// Where the header, CSRCs and extension of `fullPacket` end.
    static let fullPacketHeaderLength = 28

    @Test func parsesTheMinimalHeader() throws {
        let packet = try RTPPacket.parse(Self.minimalPacket)
        #expect(packet.marker)
        #expect(packet.payloadType == 96)
        #expect(packet.sequenceNumber == 0x1234)
        #expect(packet.timestamp == 0xDEAD_BEEF)
        #expect(packet.ssrc == 0x0102_0304)
        #expect(packet.csrcs.isEmpty)
        #expect(packet.headerExtension == nil)
        #expect(packet.payload == [0xAA, 0xBB, 0xCC])
    }

    @Test func parsesCSRCsExtensionAndPadding() throws {
        let packet = try RTPPacket.parse(Self.fullPacket)
        #expect(!packet.marker)
        #expect(packet.payloadType == 11)
        #expect(packet.sequenceNumber == 1)
        #expect(packet.timestamp == 2)
        #expect(packet.ssrc == 3)
        #expect(packet.csrcs == [0x1111_1111, 0x2222_2222])
        #expect(packet.headerExtension == RTPHeaderExtension(profileDefined: 0xBEDE, data: [1, 2, 3, 4]))
        #expect(packet.payload == [9, 9])
    }

    @Test func serializesToTheRFCLayout() {
        let packet = RTPPacket(
            marker: true, payloadType: 96, sequenceNumber: 0x1234, timestamp: 0xDEAD_BEEF,
            ssrc: 0x0102_0304, payload: [0xAA, 0xBB, 0xCC])
        #expect(packet.serialized() == Self.minimalPacket)
    }

    @Test func serializesIntoAKeptBufferWhateverItHeldBefore() {
        // The buffer held a longer packet: none of it may remain.
        var bytes = [UInt8](repeating: 0x77, count: 200)
        let payload: [UInt8] = [0x00, 0xAA, 0xBB, 0xCC, 0x00]
        RTPPacket.serialize(marker: true, payloadType: 96, sequenceNumber: 0x1234, timestamp: 0xDEAD_BEEF, ssrc: 0x0102_0304,
                            payload: payload[1..<4], into: &bytes)
        #expect(bytes == Self.minimalPacket)
    }

    @Test func readsAHeaderWhereItLiesInALargerBuffer() throws {
        let buffer = [0x55, 0x55] + Self.minimalPacket + [0x55]
        let slice = buffer[2..<(2 + Self.minimalPacket.count)]
        let header = try RTPPacket.parseHeader(slice)
        #expect(header.marker && header.payloadType == 96 && header.sequenceNumber == 0x1234)
        #expect(header.timestamp == 0xDEAD_BEEF && header.ssrc == 0x0102_0304 && header.csrcCount == 0)
        #expect(header.extensionData == nil && header.payload == 12..<15)
        #expect(Array(slice.dropFirst(header.payload.lowerBound).prefix(header.payload.count)) == [0xAA, 0xBB, 0xCC])
        #expect(throws: RTPParseError.tooShort(byteCount: 11)) { try RTPPacket.parseHeader(slice.prefix(11)) }
    }

    @Test func parsesAnArraySlice() throws {
        let buffer = Self.minimalPacket + [0xFF, 0xFF]
        let packet = try RTPPacket.parse(buffer[..<Self.minimalPacket.count])
        #expect(packet.payload == [0xAA, 0xBB, 0xCC])
    }

    @Test(arguments: [
        RTPPacket(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, payload: []),
        RTPPacket(marker: true, payloadType: 127, sequenceNumber: .max, timestamp: .max, ssrc: .max, payload: [1]),
        RTPPacket(
            payloadType: 96, sequenceNumber: 7, timestamp: 960, ssrc: 42, csrcs: Array(1...15),
            headerExtension: RTPHeaderExtension(profileDefined: 0x1000, data: [5, 6, 7, 8, 9, 10, 11, 12]),
            payload: Array(0...200)),
    ])
    func roundTrips(packet: RTPPacket) throws {
        #expect(try RTPPacket.parse(packet.serialized()) == packet)
    }

    @Test func padsExtensionDataToAWord() throws {
        let packet = RTPPacket(
            payloadType: 96, sequenceNumber: 1, timestamp: 1, ssrc: 1,
            headerExtension: RTPHeaderExtension(profileDefined: 0xBEDE, data: [1, 2, 3]), payload: [7])
        let bytes = packet.serialized()
        #expect(bytes.count == 12 + 4 + 4 + 1)
        #expect(try RTPPacket.parse(bytes).headerExtension?.data == [1, 2, 3, 0])
    }

    @Test func rejectsMalformedHeaders() {
        #expect(throws: RTPParseError.tooShort(byteCount: 11)) { try RTPPacket.parse(Self.minimalPacket.prefix(11)) }
        #expect(throws: RTPParseError.tooShort(byteCount: 0)) { try RTPPacket.parse([UInt8]()) }

        var versionOne = Self.minimalPacket
        versionOne[0] = 0x40
        #expect(throws: RTPParseError.wrongVersion(1)) { try RTPPacket.parse(versionOne) }

        var zeroPadding = Self.minimalPacket
        zeroPadding[0] |= 0x20
        zeroPadding[zeroPadding.count - 1] = 0
        #expect(throws: RTPParseError.badPadding) { try RTPPacket.parse(zeroPadding) }

        var excessivePadding = Self.minimalPacket
        excessivePadding[0] |= 0x20
        excessivePadding[excessivePadding.count - 1] = 4
        #expect(throws: RTPParseError.badPadding) { try RTPPacket.parse(excessivePadding) }

        var paddingWithoutPayload = Array(Self.minimalPacket.prefix(12))
        paddingWithoutPayload[0] |= 0x20
        #expect(throws: RTPParseError.badPadding) { try RTPPacket.parse(paddingWithoutPayload) }
    }

    @Test func everyTruncationOfTheHeaderThrows() {
        for length in 0..<Self.fullPacketHeaderLength {
            #expect(throws: RTPParseError.self, "length \(length)") {
                try RTPPacket.parse(Self.fullPacket.prefix(length))
            }
        }
        #expect(throws: RTPParseError.truncatedCSRCList(csrcCount: 2)) { try RTPPacket.parse(Self.fullPacket.prefix(16)) }
        #expect(throws: RTPParseError.truncatedExtension) { try RTPPacket.parse(Self.fullPacket.prefix(26)) }
    }
}
