/// Bytes as lowercase hexadecimal digits, and back.
public enum Hexadecimal {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digit(byte >> 4))
            text.append(digit(byte & 0x0F))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes for an even number of hexadecimal digits (either case); nil for anything else.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes = [UInt8](repeating: 0, count: digits.count / 2)
        let decoded = digits.withUnsafeBufferPointer { input in
            bytes.withUnsafeMutableBytes { decode(input, into: $0) }
        }
        return decoded ? bytes : nil
    }

    /// `bytes` in lowercase hexadecimal, written into `out` (twice as many bytes): for a secret,
    /// which must not pass through a string (strings cannot be zeroed).
    public static func encode(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>) {
        precondition(out.count == 2 * bytes.count)
        for (index, byte) in bytes.enumerated() {
            out[2 * index] = digit(byte >> 4)
            out[2 * index + 1] = digit(byte & 0x0F)
        }
    }

    /// Decodes an even number of hexadecimal digits into `out` (half as many bytes); false, with
    /// `out` partly written, when one is not a digit.
    @discardableResult
    public static func decode(_ digits: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(out.count * 2 == digits.count)
        for index in 0..<out.count {
            guard let high = nibble(digits[2 * index]), let low = nibble(digits[2 * index + 1]) else { return false }
            out[index] = high << 4 | low
        }
        return true
    }

    public static func isDigit(_ digit: UInt8) -> Bool { nibble(digit) != nil }

    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
