import IntercomCore
import Testing

/// Random and mutated bytes must give typed errors or packets, never a crash.
@Suite("Malformed input")
struct MalformedInputTests {
    static let iterations = 20_000

    /// Valid datagrams of every kind to mutate, so the fuzzing reaches past the first checks.
    static let seeds: [[UInt8]] = [
        RTPPacketTests.fullPacket,
        RTPPacketTests.minimalPacket,
        RTCPPacketTests.compound,
        RTCPPacket.application(PeerHello(
            isTalking: true, listeningPort: 5004, peerID: PeerID(bytes: Array(0..<16))!, displayName: "Ann"
        ).applicationPacket(ssrc: 1)).serialized(),
    ]

    @Test func randomBytesNeverCrashTheParsers() {
        var generator = SeededGenerator(seed: 0xF022)
        var parsedCount = 0
        for _ in 0..<Self.iterations {
            let length = Int.random(in: 0...80, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Half the inputs get a version-2 first octet, or almost all would stop at the version check.
            if !bytes.isEmpty, Bool.random(using: &generator) { bytes[0] = bytes[0] & 0x3F | 0x80 }
            parsedCount += parseEverything(bytes)
        }
        // Something must have parsed, or the fuzzing only ever exercised the first check.
        #expect(parsedCount > 0)
    }

    @Test func mutatedPacketsNeverCrashTheParsers() {
        var generator = SeededGenerator(seed: 0xB175)
        var parsedCount = 0
        for _ in 0..<Self.iterations {
            var bytes = Self.seeds[Int.random(in: 0..<Self.seeds.count, using: &generator)]
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) {
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            }
            parsedCount += parseEverything(bytes)
        }
        #expect(parsedCount > Self.iterations / 10)
    }

    /// Whatever parses as RTP serializes to bytes that parse back to the same packet;
    /// whatever parses as RTCP serializes to bytes that parse again.
    private func parseEverything(_ bytes: [UInt8]) -> Int {
        var parsedCount = 0
        if let packet = try? RTPPacket.parse(bytes) {
            parsedCount += 1
            #expect((try? RTPPacket.parse(packet.serialized())) == packet)
        }
        if let packets = try? RTCPPacket.parseCompound(bytes) {
            parsedCount += 1
            #expect((try? RTCPPacket.parseCompound(RTCPPacket.serializeCompound(packets))) != nil)
            for case .application(let application) in packets {
                _ = try? PeerHello(application)
            }
        }
        _ = try? Datagram.classify(bytes)
        _ = try? PeerHello(data: bytes)
        return parsedCount
    }
}
