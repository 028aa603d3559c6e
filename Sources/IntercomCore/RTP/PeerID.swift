/// The stable random identity of a peer: 16 raw bytes, chosen once and kept.
///
/// Addresses and SSRCs change; this tells that two datagrams come from the same peer.
public struct PeerID: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 16

    /// Exactly `byteCount` bytes.
    public let bytes: [UInt8]

    /// An identity from exactly 16 bytes, or nil.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// For callers that have already read exactly `byteCount` bytes.
    init(exactly bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount)
        self.bytes = bytes
    }

    /// A fresh identity drawn from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> PeerID {
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return PeerID(exactly: bytes)
    }

    /// Lowercase hexadecimal, 32 digits.
    public var description: String { Hexadecimal.encode(bytes) }

    /// Reads the 32 hexadecimal digits that `description` writes (either case); nil for
    /// anything else.
    public init?(hexadecimal text: String) {
        guard let bytes = Hexadecimal.decode(text) else { return nil }
        self.init(bytes: bytes)
    }
}
