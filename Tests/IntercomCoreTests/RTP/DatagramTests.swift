import IntercomCore
import Testing

@Suite("RTP and RTCP on one port")
struct DatagramTests {
    @Test func tellsRTPFromRTCP() throws {
        let rtp = RTPPacket(marker: true, payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, payload: [4])
        #expect(try Datagram.classify(rtp.serialized()) == .rtp(rtp))

        let rtcp = [RTCPPacket.receiverReport(RTCPReceiverReport(ssrc: 3))]
        #expect(try Datagram.classify(RTCPPacket.serializeCompound(rtcp)) == .rtcp(rtcp))
    }

    /// RFC 5761: with the marker bit masked off, 64–95 means RTCP (packet types 192–223);
    /// everything else is RTP.
    @Test(arguments: 0...255)
    func classifiesBySecondOctet(secondOctet: Int) {
        let bytes: [UInt8] = [0x80, UInt8(secondOctet)] + Array(repeating: 0, count: 10)
        let expectsRTCP = (64...95).contains(secondOctet & 0x7F)
        switch Result<Datagram, DatagramParseError>(catching: { () throws(DatagramParseError) in try Datagram.classify(bytes) }) {
        case .success(.rtp): #expect(!expectsRTCP)
        case .success(.rtcp), .failure(.rtcp): #expect(expectsRTCP)
        case .failure(let error): Issue.record("unexpected \(error)")
        }
    }

    @Test func reportsWhichParserFailed() {
        #expect(throws: DatagramParseError.tooShort(byteCount: 1)) { try Datagram.classify([0x80]) }
        #expect(throws: DatagramParseError.rtp(.tooShort(byteCount: 4))) { try Datagram.classify([0x80, 96, 0, 0]) }
        #expect(throws: DatagramParseError.rtcp(.truncatedHeader(byteCount: 3))) { try Datagram.classify([0x80, 201, 0]) }
    }
}
