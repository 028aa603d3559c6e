import IntercomCore
import Testing

@Suite("Peer hello")
struct PeerHelloTests {
    static let peerID = PeerID(bytes: Array(0x00...0x0F))!

    static let hello = PeerHello(isTalking: true, listeningPort: 5004, peerID: peerID, displayName: "Bo")

    /// Version 1, talking, port 5004, the id, "Bo" and one byte of padding; no rooms, talking
    /// to everyone, two bytes of padding.
    static let expectedData: [UInt8] = [
        0x01, 0x01, 0x13, 0x8C,
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
        0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
        0x02, 0x42, 0x6F, 0x00,
        0x00, 0x00, 0x00, 0x00,
    ]

    @Test func encodesTheDocumentedLayout() {
        #expect(Self.hello.data == Self.expectedData)
    }

    @Test func travelsAsAnICOMApplicationPacket() throws {
        let bytes = RTCPPacket.application(Self.hello.applicationPacket(ssrc: 0xABCD_EF01)).serialized()
        #expect(Array(bytes.prefix(12)) == [0x80, 204, 0x00, 0x09, 0xAB, 0xCD, 0xEF, 0x01, 0x49, 0x43, 0x4F, 0x4D])
        #expect(Array(bytes.dropFirst(12)) == Self.expectedData)

        guard case .rtcp(let packets) = try Datagram.classify(bytes),
              case .application(let application) = packets.first else {
            Issue.record("not an APP packet")
            return
        }
        #expect(try PeerHello(application) == Self.hello)
    }

    @Test func roundTripsNamesOfEveryLength() throws {
        for length in [0, 1, 3, 4, 63, 64] {
            var hello = Self.hello
            hello.displayName = String(repeating: "x", count: length)
            hello.isTalking = length.isMultiple(of: 2)
            #expect(hello.data.count % 4 == 0)
            #expect(try PeerHello(data: hello.data) == hello)
        }
    }

    @Test func cutsLongNamesAtACharacterBoundary() throws {
        var hello = Self.hello
        hello.displayName = String(repeating: "a", count: 63) + "é"  // 65 UTF-8 bytes
        #expect(try PeerHello(data: hello.data).displayName == String(repeating: "a", count: 63))
    }

    @Test func rejectsWhatItDoesNotUnderstand() {
        var futureVersion = Self.expectedData
        futureVersion[0] = 2
        #expect(throws: PeerHelloParseError.unsupportedVersion(2)) { try PeerHello(data: futureVersion) }

        var longName = Self.expectedData
        longName[20] = 65
        #expect(throws: PeerHelloParseError.displayNameTooLong(byteCount: 65)) { try PeerHello(data: longName) }

        var badUTF8 = Self.expectedData
        badUTF8[21] = 0xFF
        #expect(throws: PeerHelloParseError.displayNameNotUTF8) { try PeerHello(data: badUTF8) }

        let otherApplication = RTCPApplicationPacket(
            subtype: 0, ssrc: 1, name: RTCPApplicationName("XYZW")!, data: Self.expectedData)
        #expect(throws: PeerHelloParseError.notPeerHello(name: RTCPApplicationName("XYZW")!, subtype: 0)) {
            try PeerHello(otherApplication)
        }
        var otherSubtype = Self.hello.applicationPacket(ssrc: 1)
        otherSubtype.subtype = 1
        #expect(throws: PeerHelloParseError.notPeerHello(name: PeerHello.applicationName, subtype: 1)) {
            try PeerHello(otherSubtype)
        }
    }

    /// The view checks a name without making a string; it must refuse what
    /// `String(validating:)` refuses: overlong forms, surrogates, cut sequences, bytes past U+10FFFF.
    @Test(arguments: [
        [0x61, 0x62], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x8E, 0x99], [],
        [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xFE], [0x61, 0xC3],
    ] as [[UInt8]])
    func namesAreCheckedAsTheStandardLibraryChecksUTF8(name: [UInt8]) {
        var data = Array(Self.expectedData.prefix(20))
        data.append(UInt8(name.count))
        data += name
        let valid = String(validating: name, as: UTF8.self) != nil
        let read = (try? PeerHelloView(data: data[...])) != nil
        #expect(read == valid, "\(name)")
    }

    /// Rooms and whom the sender talks to follow the name; an older build's hello, which ends
    /// at the name, and one whose rooms are not as written, belong to no room and talk to all.
    @Test func carriesRoomsAndTheTarget() throws {
        let rooms = ["kitchen", "office", String(repeating: "é", count: 32)].compactMap { GroupName($0) }
        for target in [HeardTarget.all, .you, .room(GroupName("kitchen")!)] {
            var hello = Self.hello
            hello.rooms = rooms
            hello.target = target
            #expect(hello.data.count % 4 == 0)
            #expect(try PeerHello(data: hello.data) == hello)
        }
        let older = try PeerHello(data: Array(Self.expectedData.prefix(24)))
        #expect(older.rooms.isEmpty && older.target == .all && older.displayName == "Bo")
        for bad: [UInt8] in [[17, 0, 0, 0], [1, 0, 0, 0], [1, 2, 0x61, 0x07, 0], [0, 3, 0, 0], [0, 1, 0, 0], [1, 1, 0x61]] {
            let hello = try PeerHello(data: Array(Self.expectedData.prefix(24)) + bad)
            #expect(hello.rooms.isEmpty && hello.target == .all && hello.displayName == "Bo", "\(bad)")
        }
        // At most 16 rooms go out.
        var crowded = Self.hello
        crowded.rooms = (0..<20).compactMap { GroupName("room \($0)") }
        #expect(try PeerHello(data: crowded.data).rooms == Array(crowded.rooms.prefix(16)))
    }

    @Test func aTargetIsAllARoomOrADevice() throws {
        #expect(try CallTarget(parsing: "all") == .all)
        #expect(try CallTarget(parsing: "room:kitchen") == .room(GroupName("kitchen")!))
        #expect(try CallTarget(parsing: "3f2a-91c0-77de-0b41") == .device(GroupName("3f2a-91c0-77de-0b41")!))
        for bad in ["", "room:", "room:\u{1B}[2J", String(repeating: "x", count: 33), "a\nb"] {
            #expect(throws: CallTargetError.badName(bad)) { try CallTarget(parsing: bad) }
        }
        #expect(CallTargetError.badName("\u{1B}]0;x").description.unicodeScalars.allSatisfy { $0.value >= 0x20 })
    }

    @Test func ignoresReservedFlagsAndTrailingBytes() throws {
        var extended = Self.expectedData
        extended[1] = 0xFE  // reserved bits set, talking clear
        extended += [1, 2, 3, 4]
        let hello = try PeerHello(data: extended)
        #expect(!hello.isTalking)
        #expect(hello.displayName == "Bo")
    }

    @Test func everyTruncationBeforeTheNameEndsThrows() {
        // 4 + 16 + 1 + 2: the padding byte after "Bo" is the only optional one.
        for length in 0..<23 {
            #expect(throws: PeerHelloParseError.truncated, "length \(length)") {
                try PeerHello(data: Array(Self.expectedData.prefix(length)))
            }
        }
    }

    @Test func peerIDsAreSixteenBytes() {
        #expect(PeerID(bytes: Array(repeating: 0, count: 15)) == nil)
        #expect(Self.peerID.description == "000102030405060708090a0b0c0d0e0f")
        var generator = SeededGenerator(seed: 3)
        let first = PeerID.random(using: &generator)
        let second = PeerID.random(using: &generator)
        #expect(first != second)
    }
}
