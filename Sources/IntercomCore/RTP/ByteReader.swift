/// Reads big-endian fields from bytes within a bounded range, where they lie.
///
/// Every read names the error to throw when the bytes run out, so each parser reports
/// its own typed error and no read can go out of bounds. Positions count from the start of
/// the bytes given, whatever their indices in a larger buffer.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private let end: Int
    private(set) var position: Int

    init(_ bytes: ArraySlice<UInt8>, range: Range<Int>? = nil) {
        let bounds = range?.clamped(to: 0..<bytes.count) ?? 0..<bytes.count
        self.bytes = bytes
        self.position = bounds.lowerBound
        self.end = bounds.upperBound
    }

    init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.init(bytes[...], range: range)
    }

    var remainingCount: Int { end - position }

    private func byte(_ offset: Int) -> UInt8 { bytes[bytes.startIndex + position + offset] }

    mutating func readUInt8<Failure: Error>(orThrow failure: Failure) throws(Failure) -> UInt8 {
        guard remainingCount >= 1 else { throw failure }
        defer { position += 1 }
        return byte(0)
    }

    mutating func readUInt16<Failure: Error>(orThrow failure: Failure) throws(Failure) -> UInt16 {
        guard remainingCount >= 2 else { throw failure }
        defer { position += 2 }
        return UInt16(byte(0)) << 8 | UInt16(byte(1))
    }

    mutating func readUInt32<Failure: Error>(orThrow failure: Failure) throws(Failure) -> UInt32 {
        guard remainingCount >= 4 else { throw failure }
        defer { position += 4 }
        return UInt32(byte(0)) << 24 | UInt32(byte(1)) << 16 | UInt32(byte(2)) << 8 | UInt32(byte(3))
    }

    /// The next `count` bytes, as a slice of the bytes read (nothing copied).
    mutating func readSlice<Failure: Error>(_ count: Int, orThrow failure: Failure) throws(Failure) -> ArraySlice<UInt8> {
        guard count >= 0, remainingCount >= count else { throw failure }
        defer { position += count }
        let start = bytes.startIndex + position
        return bytes[start..<start + count]
    }

    mutating func skip<Failure: Error>(_ count: Int, orThrow failure: Failure) throws(Failure) {
        guard count >= 0, remainingCount >= count else { throw failure }
        position += count
    }

    /// The bytes between two positions, whether read yet or not (clamped to the bytes).
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        let bounds = range.clamped(to: 0..<bytes.count)
        return bytes[bytes.startIndex + bounds.lowerBound..<bytes.startIndex + bounds.upperBound]
    }

    /// The rest of the range, consuming it (nothing copied).
    mutating func readRemaining() -> ArraySlice<UInt8> {
        defer { position = end }
        return bytes[bytes.startIndex + position..<bytes.startIndex + end]
    }
}
