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
///
/// Flags: bit 0 = talking; other bits are reserved, sent as 0 and ignored when read.
/// Bytes after the padded name are ignored, leaving room for compatible additions.
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

    public init(isTalking: Bool, listeningPort: UInt16, peerID: PeerID, displayName: String) {
        self.isTalking = isTalking
        self.listeningPort = listeningPort
        self.peerID = peerID
        self.displayName = displayName
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
            peerID: PeerID(exactly: Array(view.peerIDBytes)), displayName: String(decoding: view.displayNameBytes, as: UTF8.self)
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
        return bytes
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
}
