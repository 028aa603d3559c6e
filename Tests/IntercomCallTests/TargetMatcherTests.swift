@testable import IntercomCall
import IntercomCore
import Testing

/// The network thread's target resolution: which peer a room or a device target reaches, from
/// what each peer's hello and session say.
@Suite struct TargetMatcherTests {
    /// The rooms block of a hello naming `rooms`.
    static func roomsBytes(_ rooms: [String]) throws -> [UInt8] {
        let hello = PeerHello(isTalking: false, listeningPort: 1, peerID: PeerID(bytes: Array(repeating: 7, count: 16))!, displayName: "x",
                              rooms: rooms.compactMap { GroupName($0) })
        return Array(try PeerHelloView(data: hello.data[...]).roomsBytes)
    }

    @Test func aRoomTargetReachesThePeersWhoseHelloNamesIt() throws {
        let kitchen = TargetMatcher(.room(GroupName("kitchen")!))
        #expect(kitchen.isRoomNamed(in: try Self.roomsBytes(["office", "kitchen"])))
        #expect(!kitchen.isRoomNamed(in: try Self.roomsBytes(["office", "kitchenette", "Kitchen"])))
        #expect(!kitchen.isRoomNamed(in: try Self.roomsBytes([])) && !kitchen.isRoomNamed(in: []))
        // A block cut short names nothing past its end.
        #expect(!kitchen.isRoomNamed(in: Array(try Self.roomsBytes(["kitchen"]).dropLast())))
        #expect(!TargetMatcher(.all).isRoomNamed(in: try Self.roomsBytes(["kitchen"])))
    }

    @Test func aDeviceTargetNamesADeviceOrItsFingerprint() {
        let byName = TargetMatcher(.device(GroupName("bo")!))
        #expect(byName.isDeviceNamed("bo") && !byName.isDeviceNamed("bob") && !byName.isFingerprint("3f2a-91c0-77de-0b41"))
        for written in ["3f2a-91c0-77de-0b41", "3F2A91C077DE0B41", "3f2a:91c0:77de:0b41"] {
            let byPrint = TargetMatcher(.device(GroupName(written)!))
            #expect(byPrint.isFingerprint("3f2a-91c0-77de-0b41"), "\(written)")
            #expect(!byPrint.isFingerprint("3f2a-91c0-77de-0b42"))
        }
        // Too short, or not hexadecimal, is a name and never a fingerprint.
        #expect(!TargetMatcher(.device(GroupName("3f2a")!)).isFingerprint("3f2a-91c0-77de-0b41"))
        #expect(!TargetMatcher(.device(GroupName("kitchen-pi")!)).isFingerprint("3f2a-91c0-77de-0b41"))
    }
}
