/// Our hello and keepalive message: an RTCP APP packet named "ICOM" with subtype 0.
///
/// Data layout (version 1), big-endian:
///
///     0        1        2                 4
///     +--------+--------+-----------------+
///     |version | flags  | listening port  |
///     +--------+--------+-----------------+
///     |        peer id (16 bytes)          |
///     +--------+---------------------------+
///     | length | display name (UTF-8) ... zero padding to 32 bits
///     +--------+---------------------------+
///     | rooms  | length | room (UTF-8) ... (`rooms` times)
///     +--------+--------+------------------
///     | target | length | room (UTF-8), for a room target only ... zero padding to 32 bits
///     +--------+--------+------------------
///
/// Flags: bit 0 = talking (to this receiver: a talker whose target leaves it out is not
/// talking to it); other bits are reserved, sent as 0 and ignored when read. The rooms the
/// sender belongs to (at most 16, names as `GroupName`) and whom it talks to, as this receiver
/// is concerned (0 everyone, 1 a room, 2 this receiver alone), follow the padded name; a hello
/// that ends there (an older build), or whose rooms are not as written here, belongs to no room
/// and talks to everyone. Bytes after them are ignored, leaving room for compatible additions.
public struct PeerHello: Equatable, Sendable {
    /// The version this build sends and the only one it reads.
    public static let currentVersion: UInt8 = 1
    /// "ICOM"
    public static let applicationName = RTCPApplicationName(rawValue: 0x4943_4F4D)
    /// The APP subtype of hello and keepalive.
    public static let subtype: UInt8 = 0
    /// The longest display name on the wire, in UTF-8 bytes.
    public static let maximumDisplayNameByteCount = 64

    fileprivate static let talkingFlag: UInt8 = 0x01

    public var isTalking: Bool
    /// The UDP port the peer receives on.
    public var listeningPort: UInt16
    public var peerID: PeerID
    /// Cut to 64 UTF-8 bytes, at a character boundary, on the wire.
    public var displayName: String
    /// The rooms the sender belongs to (the first 16 on the wire).
    public var rooms: [GroupName]
    /// Whom the sender talks to, as this receiver is concerned.
    public var target: HeardTarget

    public init(
        isTalking: Bool, listeningPort: UInt16, peerID: PeerID, displayName: String, rooms: [GroupName] = [], target: HeardTarget = .all
    ) {
        self.isTalking = isTalking
        self.listeningPort = listeningPort
        self.peerID = peerID
        self.displayName = displayName
        self.rooms = rooms
        self.target = target
    }

    /// Reads a hello from an APP packet.
    public init(_ packet: RTCPApplicationPacket) throws(PeerHelloParseError) {
        guard packet.name == Self.applicationName, packet.subtype == Self.subtype else {
            throw .notPeerHello(name: packet.name, subtype: packet.subtype)
        }
        try self.init(data: packet.data)
    }

    /// Reads a hello from the data of its APP packet.
    public init(data: [UInt8]) throws(PeerHelloParseError) {
        self.init(try PeerHelloView(data: data[...]))
    }

    /// The hello a view reads, copied out of its packet.
    public init(_ view: PeerHelloView) {
        self.init(
            isTalking: view.isTalking, listeningPort: view.listeningPort,
            peerID: PeerID(exactly: Array(view.peerIDBytes)), displayName: String(decoding: view.displayNameBytes, as: UTF8.self),
            rooms: PeerHelloView.rooms(in: view.roomsBytes),
            target: PeerHelloView.target(kind: view.targetKind, room: view.targetRoomBytes)
        )
    }

    /// The APP data bytes, padded to a 32-bit boundary.
    public var data: [UInt8] {
        let name = displayName.utf8Prefix(maximumByteCount: Self.maximumDisplayNameByteCount)
        var bytes: [UInt8] = [Self.currentVersion, isTalking ? Self.talkingFlag : 0]
        bytes.appendBigEndian(listeningPort)
        bytes += peerID.bytes
        bytes.append(UInt8(name.count))
        bytes += name
        bytes.padToWordBoundary()
        let rooms = rooms.prefix(GroupName.maximumRooms)
        bytes.append(UInt8(rooms.count))
        for room in rooms { Self.appendName(room, to: &bytes) }
        switch target {
        case .all: bytes.append(0)
        case .room(let room):
            bytes.append(1)
            Self.appendName(room, to: &bytes)
        case .you: bytes.append(2)
        }
        bytes.padToWordBoundary()
        return bytes
    }

    private static func appendName(_ name: GroupName, to bytes: inout [UInt8]) {
        let utf8 = name.text.utf8Prefix(maximumByteCount: PeerHelloView.maximumNameBytes)
        bytes.append(UInt8(utf8.count))
        bytes += utf8
    }

    /// The hello as an APP packet from the given SSRC.
    public func applicationPacket(ssrc: UInt32) -> RTCPApplicationPacket {
        RTCPApplicationPacket(subtype: Self.subtype, ssrc: ssrc, name: Self.applicationName, data: data)
    }
}

/// A hello read where it lies in its APP packet's data, checked as `PeerHello` checks it: what
/// the network thread reads from each peer every second, without allocating.
public struct PeerHelloView: Sendable {
    public var isTalking: Bool
    public var listeningPort: UInt16
    /// `PeerID.byteCount` bytes.
    public var peerIDBytes: ArraySlice<UInt8>
    /// Valid UTF-8, at most `PeerHello.maximumDisplayNameByteCount` bytes.
    public var displayNameBytes: ArraySlice<UInt8>
    /// The rooms, as they are on the wire (count, then length and name each), checked: for
    /// the network thread to keep and compare without reading them out.
    public var roomsBytes: ArraySlice<UInt8>
    /// Whom the sender talks to as this receiver is concerned, as on the wire: 0 everyone,
    /// 1 the room named in `targetRoomBytes`, 2 this receiver alone.
    public var targetKind: UInt8
    public var targetRoomBytes: ArraySlice<UInt8>
    /// The most UTF-8 bytes of a room's name (32 characters of up to 4 bytes).
    public static let maximumNameBytes = GroupName.maximumCharacters * 4

    public init(data: ArraySlice<UInt8>) throws(PeerHelloParseError) {
        var reader = ByteReader(data)
        let version = try reader.readUInt8(orThrow: PeerHelloParseError.truncated)
        guard version == PeerHello.currentVersion else { throw .unsupportedVersion(version) }
        let flags = try reader.readUInt8(orThrow: PeerHelloParseError.truncated)
        listeningPort = try reader.readUInt16(orThrow: PeerHelloParseError.truncated)
        peerIDBytes = try reader.readSlice(PeerID.byteCount, orThrow: PeerHelloParseError.truncated)
        let nameLength = Int(try reader.readUInt8(orThrow: PeerHelloParseError.truncated))
        guard nameLength <= PeerHello.maximumDisplayNameByteCount else { throw .displayNameTooLong(byteCount: nameLength) }
        displayNameBytes = try reader.readSlice(nameLength, orThrow: PeerHelloParseError.truncated)
        guard Self.isValidUTF8(displayNameBytes) else { throw .displayNameNotUTF8 }
        isTalking = flags & PeerHello.talkingFlag != 0
        // The padding after the name, then (from builds that send them) rooms and target.
        // (The padding is optional where the hello ends with the name.)
        let padded = (1 + 1 + 2 + PeerID.byteCount + 1 + nameLength + 3) / 4 * 4
        let padding = padded - (1 + 1 + 2 + PeerID.byteCount + 1 + nameLength)
        roomsBytes = data[data.endIndex...]
        targetKind = 0
        targetRoomBytes = data[data.endIndex...]
        guard reader.remainingCount > padding else { return }
        _ = try reader.readSlice(padding, orThrow: PeerHelloParseError.truncated)
        // Rooms and target that are not as this build writes them are read as none and
        // everyone: the hello itself (name, port, talking) still counts.
        do {
            let roomsStart = data.startIndex + padded
            let count = Int(try reader.readUInt8(orThrow: PeerHelloParseError.truncated))
            guard count <= GroupName.maximumRooms else { throw PeerHelloParseError.badRooms }
            for _ in 0..<count { _ = try Self.readName(&reader) }
            let rooms = data[roomsStart..<(data.endIndex - reader.remainingCount)]
            let kind = try reader.readUInt8(orThrow: PeerHelloParseError.truncated)
            var room = data[data.endIndex...]
            switch kind {
            case 0, 2: break
            case 1: room = try Self.readName(&reader)
            default: throw PeerHelloParseError.badRooms
            }
            (roomsBytes, targetKind, targetRoomBytes) = (rooms, kind, room)
        } catch {}
    }

    /// `targetKind` and `targetRoomBytes` read out.
    public static func target(kind: UInt8, room: ArraySlice<UInt8>) -> HeardTarget {
        switch kind {
        case 1: GroupName(String(decoding: room, as: UTF8.self)).map(HeardTarget.room) ?? .all
        case 2: .you
        default: .all
        }
    }

    /// One length-prefixed name, checked as `GroupName` checks it.
    private static func readName(_ reader: inout ByteReader) throws(PeerHelloParseError) -> ArraySlice<UInt8> {
        let length = Int(try reader.readUInt8(orThrow: PeerHelloParseError.truncated))
        guard length >= 1, length <= maximumNameBytes else { throw .badRooms }
        let name = try reader.readSlice(length, orThrow: PeerHelloParseError.truncated)
        // Checked scalar by scalar, without making a string (the network thread reads this).
        var decoder = UTF8()
        var iterator = name.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                guard !GroupName.isUnprintable(scalar) else { throw .badRooms }
            case .emptyInput: return name
            case .error: throw .badRooms
            }
        }
    }

    /// The rooms in `roomsBytes` as `init(data:)` checked them.
    public static func rooms(in bytes: ArraySlice<UInt8>) -> [GroupName] {
        var rooms: [GroupName] = []
        _ = firstRoom(in: bytes) { name in
            if let room = GroupName(String(decoding: name, as: UTF8.self)) { rooms.append(room) }
            return false
        }
        return rooms
    }

    /// Whether `matches` holds for one of the room names (UTF-8) in `roomsBytes`, read in
    /// order until it does; a block cut short ends there. Allocates nothing.
    public static func firstRoom(in bytes: ArraySlice<UInt8>, where matches: (ArraySlice<UInt8>) -> Bool) -> Bool {
        guard let count = bytes.first else { return false }
        var index = bytes.startIndex + 1
        for _ in 0..<Int(count) {
            guard index < bytes.endIndex else { return false }
            let end = index + 1 + Int(bytes[index])
            guard end <= bytes.endIndex else { return false }
            if matches(bytes[(index + 1)..<end]) { return true }
            index = end
        }
        return false
    }

    /// The check `String(validating:as:)` makes, without making the string.
    private static func isValidUTF8(_ bytes: ArraySlice<UInt8>) -> Bool {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

/// Why an APP packet is not a hello we understand.
public enum PeerHelloParseError: Error, Equatable, Sendable {
    /// Another application's APP packet, or another of our subtypes.
    case notPeerHello(name: RTCPApplicationName, subtype: UInt8)
    /// A protocol version this build does not speak.
    case unsupportedVersion(UInt8)
    case truncated
    case displayNameTooLong(byteCount: Int)
    case displayNameNotUTF8
    /// Rooms or a target that are not as `PeerHello` writes them (read as none and everyone).
    case badRooms
}
