import IntercomCore

/// A short, readable name for a device's public key: the first 8 bytes of its SHA-256, in
/// four groups of four hexadecimal digits (`3f2a-91c0-77de-0b41`). Shown wherever a peer is
/// named, so that users can tell devices apart and compare them by eye.
public struct Fingerprint: Hashable, Sendable, CustomStringConvertible {
    public let description: String

    public init(publicKey: [UInt8]) {
        let digits = Array(Hexadecimal.encode(Sodium.sha256(publicKey).prefix(8)))
        description = stride(from: 0, to: digits.count, by: 4).map { String(digits[$0..<($0 + 4)]) }.joined(separator: "-")
    }

    /// Whether `text` names this fingerprint, with or without its dashes, in either case.
    public func matches(_ text: String) -> Bool {
        let wanted = text.lowercased().filter { $0 != "-" && $0 != ":" }
        return wanted.count >= 8 && description.filter { $0 != "-" } == wanted
    }
}

/// A device's public key (X25519, as its handshakes prove it), told apart from other bytes:
/// what a session, a stream owner, the paired list and the call's figures key devices by.
/// Its fingerprint is made on demand (hashing allocates: keep it where it is shown often).
public struct DeviceKey: Hashable, Sendable {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var fingerprint: Fingerprint { Fingerprint(publicKey: bytes) }
}
