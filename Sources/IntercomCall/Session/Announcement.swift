import IntercomCore

/// Whom a call talks to and the rooms it belongs to, as its hellos tell its peers.
struct Announcement: Sendable {
    let target: TargetMatcher
    let rooms: [GroupName]

    init(target: CallTarget, rooms: [GroupName]) {
        self.target = TargetMatcher(target)
        self.rooms = rooms
    }
}

/// A target made ready for the network thread to compare, packet by packet, with what it
/// knows of each peer, without allocating: the room's name as bytes, a fingerprint as
/// lowercase hexadecimal digits.
struct TargetMatcher: Sendable {
    let target: CallTarget
    private let roomBytes: [UInt8]
    private let fingerprintDigits: [UInt8]?

    init(_ target: CallTarget) {
        self.target = target
        switch target {
        case .all:
            roomBytes = []
            fingerprintDigits = nil
        case .room(let room):
            roomBytes = Array(room.text.utf8)
            fingerprintDigits = nil
        case .device(let device):
            roomBytes = []
            let digits = Array(device.text.lowercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: ":") })
            let hexadecimal = digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
            fingerprintDigits = digits.count >= 8 && hexadecimal ? digits : nil
        }
    }

    /// Whether a hello's rooms (`PeerHelloView.roomsBytes`) name the target's room.
    func isRoomNamed(in rooms: [UInt8]) -> Bool {
        !roomBytes.isEmpty && PeerHelloView.firstRoom(in: rooms[...]) { $0.elementsEqual(roomBytes) }
    }

    func isDeviceNamed(_ name: String) -> Bool {
        if case .device(let device) = target { return device.text == name }
        return false
    }

    /// Whether a fingerprint as shown (`3f2a-91c0-77de-0b41`) is the target's.
    func isFingerprint(_ shown: String) -> Bool {
        guard let fingerprintDigits else { return false }
        return shown.utf8.lazy.filter { $0 != UInt8(ascii: "-") }.elementsEqual(fingerprintDigits)
    }
}
