/// Remote strings (display names, service names, TXT values) made safe to show on a
/// terminal or write to a log: control characters (C0, DEL, C1 with the 8-bit CSI), bidi
/// overrides and isolates are replaced with U+FFFD, so a name cannot move the cursor, rewrite
/// the screen or hide text; and the length is capped.
public enum TerminalText {
    public static let defaultLimit = 64

    public static func sanitized(_ text: some StringProtocol, limit: Int = defaultLimit) -> String {
        var scalars = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else {
                scalars.append("…")
                break
            }
            scalars.append(isUnsafe(scalar) ? "\u{FFFD}" : scalar)
            count += 1
        }
        return String(scalars)
    }

    /// Bytes from the network, decoded as UTF-8 (invalid sequences become U+FFFD) and sanitized.
    public static func sanitized(bytes: some Collection<UInt8>, limit: Int = defaultLimit) -> String {
        sanitized(String(decoding: bytes, as: UTF8.self), limit: limit)
    }

    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        // Bidi embeddings and overrides, isolates, and the marks that reorder text.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }
}
