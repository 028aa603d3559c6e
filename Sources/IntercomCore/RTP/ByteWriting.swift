extension [UInt8] {
    mutating func appendBigEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends zero bytes until the count is a multiple of four (RTP and RTCP fields are 32-bit aligned).
    mutating func padToWordBoundary() {
        while count % 4 != 0 { append(0) }
    }
}

extension String {
    /// The UTF-8 bytes of the string, cut at a Unicode scalar boundary so they fit in `maximumCount` bytes.
    ///
    /// Wire formats here limit text lengths (SDES items to 255 bytes, display names to 64);
    /// cutting between scalars keeps the bytes valid UTF-8.
    func utf8Prefix(maximumByteCount: Int) -> [UInt8] {
        var result: [UInt8] = []
        for scalar in unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard result.count + encoded.count <= maximumByteCount else { break }
            result += encoded
        }
        return result
    }
}
