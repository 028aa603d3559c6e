/// DNS-SD TXT record strings as RFC 6763 §6 defines them: each string is `key=value`.
public enum TXTRecord {
    /// The longest string one TXT entry may hold: its length is a single byte on the wire.
    public static let maximumEntryBytes = 255

    /// `key=value`, or nil when the key is empty, is not printable ASCII, holds `=`, or the
    /// entry would not fit in 255 bytes.
    public static func entry(key: String, value: String) -> String? {
        let keyIsValid = !key.isEmpty && key.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: "=") }
        let entry = "\(key)=\(value)"
        guard keyIsValid, entry.utf8.count <= maximumEntryBytes else { return nil }
        return entry
    }

    /// The key/value pairs of a TXT record, with RFC 6763's reading rules: keys compare
    /// case-insensitively (they come back lowercased), the first occurrence of a key wins,
    /// entries with an empty key are ignored, and a key without `=` (a boolean attribute)
    /// reads as an empty value. Values are decoded as UTF-8, invalid bytes replaced.
    public static func decode(_ entries: [[UInt8]]) -> [String: String] {
        var pairs: [String: String] = [:]
        for entry in entries {
            let separator = entry.firstIndex(of: UInt8(ascii: "=")) ?? entry.endIndex
            guard separator > entry.startIndex else { continue }
            let key = String(decoding: entry[..<separator], as: UTF8.self).lowercased()
            let value = separator < entry.endIndex ? String(decoding: entry[(separator + 1)...], as: UTF8.self) : ""
            if pairs[key] == nil { pairs[key] = value }
        }
        return pairs
    }
}
