/// Reads big-endian fields from a byte array within a bounded range.
///
/// Every read names the error to throw when the bytes run out, so each parser reports
/// its own typed error and no read can go out of bounds.
struct ByteReader {
    private let bytes: [UInt8]
    private let end: Int
    private(set) var position: Int

    init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        let bounds = range?.clamped(to: 0..<bytes.count) ?? 0..<bytes.count
        self.bytes = bytes
        self.position = bounds.lowerBound
        self.end = bounds.upperBound
    }

    var remainingCount: Int { end - position }

    mutating func readUInt8<Failure: Error>(orThrow failure: Failure) throws(Failure) -> UInt8 {
        guard remainingCount >= 1 else { throw failure }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func readUInt16<Failure: Error>(orThrow failure: Failure) throws(Failure) -> UInt16 {
        guard remainingCount >= 2 else { throw failure }
        defer { position += 2 }
        return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
    }

    mutating func readUInt32<Failure: Error>(orThrow failure: Failure) throws(Failure) -> UInt32 {
        guard remainingCount >= 4 else { throw failure }
        defer { position += 4 }
        return UInt32(bytes[position]) << 24 | UInt32(bytes[position + 1]) << 16
            | UInt32(bytes[position + 2]) << 8 | UInt32(bytes[position + 3])
    }

    mutating func readBytes<Failure: Error>(_ count: Int, orThrow failure: Failure) throws(Failure) -> [UInt8] {
        guard count >= 0, remainingCount >= count else { throw failure }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func skip<Failure: Error>(_ count: Int, orThrow failure: Failure) throws(Failure) {
        guard count >= 0, remainingCount >= count else { throw failure }
        position += count
    }

    /// The rest of the range, consuming it.
    mutating func readRemaining() -> [UInt8] {
        defer { position = end }
        return Array(bytes[position..<end])
    }
}
