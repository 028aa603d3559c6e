import IntercomCore
import IntercomIO
import Testing

@Suite("Discovery: TXT records and announcements")
struct DiscoveryTXTRecordTests {
    private let peerID = PeerID(bytes: Array(0..<16))!

    @Test func announcementPublishesShortKeyValuePairs() throws {
        let announcement = try ServiceAnnouncement(name: "alice@kitchen", port: 5004, peerID: peerID)
        #expect(announcement.txtEntries == ["v=3", "id=000102030405060708090a0b0c0d0e0f", "codec=opus", "ptime=10", "chan=", "fp="])
        #expect(announcement.txtEntries.allSatisfy { $0.utf8.count <= 40 })
    }

    @Test func announcedRecordReadsBack() throws {
        let announcement = try ServiceAnnouncement(
            name: "bob", port: 6000, peerID: peerID, frameMilliseconds: 20, channel: "ops", fingerprint: "3f2a-91c0-77de-0b41")
        let txt = TXTRecord.decode(announcement.txtEntries.map { Array($0.utf8) })
        let peer = DiscoveredPeer(serviceName: "bob", hostName: "h.local", addresses: [], txt: txt, firstSeenNanoseconds: 0, lastSeenNanoseconds: 0)
        #expect(peer.peerID == peerID)
        #expect(peer.protocolVersion == 3)
        #expect(txt["codec"] == "opus" && txt["ptime"] == "20" && txt["chan"] == "ops" && txt["fp"] == "3f2a-91c0-77de-0b41")
    }

    @Test func decodingFollowsRFC6763() {
        let entries = ["V=1", "v=2", "=orphan", "flag", "empty=", "eq=a=b", ""].map { Array($0.utf8) }
        let txt = TXTRecord.decode(entries)
        // Keys are case-insensitive and the first occurrence wins; a key without "=" is a
        // present attribute; the value runs to the end, "=" included; no key, no entry.
        #expect(txt == ["v": "1", "flag": "", "empty": "", "eq": "a=b"])
    }

    @Test func malformedValuesDecodeWithoutCrashing() {
        let txt = TXTRecord.decode([[0x69, 0x64, 0x3D, 0xFF, 0xFE], [0x3D]])
        #expect(txt["id"] == "\u{FFFD}\u{FFFD}")
        let peer = DiscoveredPeer(serviceName: "x", hostName: "", addresses: [], txt: txt, firstSeenNanoseconds: 0, lastSeenNanoseconds: 0)
        #expect(peer.peerID == nil)
        #expect(peer.protocolVersion == nil)
    }

    @Test func entriesMustFitTheWireFormat() {
        #expect(TXTRecord.entry(key: "k", value: String(repeating: "x", count: 253)) != nil)
        #expect(TXTRecord.entry(key: "k", value: String(repeating: "x", count: 254)) == nil)
        #expect(TXTRecord.entry(key: "", value: "x") == nil)
        #expect(TXTRecord.entry(key: "a=b", value: "x") == nil)
        #expect(TXTRecord.entry(key: "tab\t", value: "x") == nil)
    }

    @Test func announcementRejectsWhatCannotBePublished() {
        #expect(throws: DiscoveryError.self) { try ServiceAnnouncement(name: "", port: 1, peerID: peerID) }
        #expect(throws: DiscoveryError.self) { try ServiceAnnouncement(name: String(repeating: "é", count: 32), port: 1, peerID: peerID) }
        #expect(throws: DiscoveryError.self) { try ServiceAnnouncement(name: "a", port: 1, peerID: peerID, channel: String(repeating: "c", count: 300)) }
        #expect((try? ServiceAnnouncement(name: String(repeating: "a", count: 63), port: 1, peerID: peerID)) != nil)
    }

    @Test func peerIDsReadBackFromHexadecimal() {
        #expect(PeerID(hexadecimal: peerID.description) == peerID)
        #expect(PeerID(hexadecimal: "000102030405060708090A0B0C0D0E0F") == peerID)
        #expect(PeerID(hexadecimal: "00010203") == nil)
        #expect(PeerID(hexadecimal: "g00102030405060708090a0b0c0d0e0f") == nil)
        #expect(PeerID(hexadecimal: "000102030405060708090a0b0c0d0e0f00") == nil)
    }

    @Test func errorsCarryAvahisOwnMessage() {
        let error = DiscoveryError.daemonNotRunning(AvahiError(code: -26))
        #expect(error.description.contains("avahi-daemon is not running"))
        #expect(error.description.contains("Daemon not running"))
    }
}
