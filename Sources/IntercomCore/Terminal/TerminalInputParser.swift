/// Turns the bytes a terminal sends into key events, understanding plain characters, the
/// kitty keyboard protocol's `CSI … u` key reports (with press, repeat and release event
/// types once progressive enhancement flag 2 is on), and its reply to the support query.
///
/// Bytes may arrive split anywhere; incomplete sequences wait for the next call. Unknown
/// escape sequences are skipped whole.
public struct TerminalInputParser: Sendable {
    public enum Event: Sendable, Equatable {
        /// A key, with the kitty event type where the terminal reports it (else `.press`).
        case key(Key, modifiers: Modifiers, type: KeyEventType)
        /// The terminal answered the kitty protocol query (`CSI ? flags u`).
        case keyboardProtocolSupported(flags: Int)
    }

    public enum Key: Sendable, Hashable {
        case character(Character)
        case escape, enter, tab, backspace
        case up, down, left, right
        case other(code: Int)
    }

    public enum KeyEventType: Int, Sendable {
        case press = 1, `repeat` = 2, release = 3
    }

    public struct Modifiers: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let shift = Modifiers(rawValue: 1)
        public static let alt = Modifiers(rawValue: 2)
        public static let control = Modifiers(rawValue: 4)
    }

    private var pending: [UInt8] = []
    private static let longestSequence = 64

    /// Bytes held back as the start of an incomplete sequence.
    public var pendingByteCount: Int { pending.count }

    public init() {}

    /// The bytes that ask a terminal for the kitty protocol's flags; a terminal that knows
    /// the protocol answers `CSI ? flags u`, any terminal answers the device attributes query
    /// that follows, so the answer to the first is known to be missing once the second comes.
    public static let supportQuery: [UInt8] = Array("\u{1B}[?u\u{1B}[c".utf8)
    /// Pushes flags 1 (disambiguate) and 2 (report event types): press, repeat and release.
    public static let enableEventTypes: [UInt8] = Array("\u{1B}[>3u".utf8)
    /// Pops what `enableEventTypes` pushed.
    public static let restore: [UInt8] = Array("\u{1B}[<u".utf8)

    /// Feeds bytes read from the terminal; returns the complete events among them.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        pending.append(contentsOf: bytes)
        var events: [Event] = []
        var index = 0
        while index < pending.count {
            let byte = pending[index]
            if byte == 0x1B {
                guard index + 1 < pending.count else { break }  // a lone ESC may be the start of a sequence
                if pending[index + 1] == UInt8(ascii: "[") {
                    guard let end = finalByteIndex(from: index + 2) else {
                        // No real sequence runs this long: drop the introducer rather than wait forever.
                        if pending.count - index > Self.longestSequence { index += 2; continue }
                        break
                    }
                    if let event = csi(parameters: Array(pending[(index + 2)..<end]), final: pending[end]) { events.append(event) }
                    index = end + 1
                } else {
                    events.append(.key(.escape, modifiers: [], type: .press))
                    index += 1
                }
                continue
            }
            guard let (character, length) = decodeCharacter(at: index) else { break }
            events.append(.key(plainKey(character), modifiers: [], type: .press))
            index += length
        }
        pending.removeFirst(index)
        return events
    }

    /// An escape key press arrives as a lone ESC with nothing after it; call this when no
    /// more bytes came for a short while, to report it.
    public mutating func flushLoneEscape() -> [Event] {
        guard pending == [0x1B] else { return [] }
        pending.removeAll()
        return [.key(.escape, modifiers: [], type: .press)]
    }

    /// Index of the final byte (0x40…0x7E) of a CSI sequence whose parameters start at `start`.
    private func finalByteIndex(from start: Int) -> Int? {
        var index = start
        while index < pending.count {
            if (0x40...0x7E).contains(pending[index]) { return index }
            index += 1
        }
        return nil
    }

    private func csi(parameters raw: [UInt8], final: UInt8) -> Event? {
        let text = String(decoding: raw, as: UTF8.self)
        if final == UInt8(ascii: "u"), text.hasPrefix("?") {
            return Int(text.dropFirst()).map { .keyboardProtocolSupported(flags: $0) }
        }
        // CSI code ; modifiers[:type] u   or   CSI 1 ; modifiers[:type] A|B|C|D
        let fields = text.split(separator: ";", omittingEmptySubsequences: false)
        let code = fields.first.flatMap { Int($0.split(separator: ":").first ?? "") } ?? 1
        var modifiers: Modifiers = []
        var type = KeyEventType.press
        if fields.count > 1 {
            let parts = fields[1].split(separator: ":")
            if let value = parts.first.flatMap({ Int($0) }), value > 0 { modifiers = Modifiers(rawValue: (value - 1) & 0b111) }
            if parts.count > 1, let raw = Int(parts[1]), let eventType = KeyEventType(rawValue: raw) { type = eventType }
        }
        let key: Key
        switch final {
        case UInt8(ascii: "u"): key = kittyKey(code)
        case UInt8(ascii: "A"): key = .up
        case UInt8(ascii: "B"): key = .down
        case UInt8(ascii: "C"): key = .right
        case UInt8(ascii: "D"): key = .left
        default: return nil
        }
        return .key(key, modifiers: modifiers, type: type)
    }

    private func kittyKey(_ code: Int) -> Key {
        switch code {
        case 27: .escape
        case 13: .enter
        case 9: .tab
        case 127: .backspace
        default: Unicode.Scalar(code).map { .character(Character($0)) } ?? .other(code: code)
        }
    }

    private func plainKey(_ character: Character) -> Key {
        switch character {
        case "\r", "\n": .enter
        case "\t": .tab
        case "\u{7F}", "\u{08}": .backspace
        default: .character(character)
        }
    }

    /// One UTF-8 character at `index`, or nil when it is not complete yet.
    private func decodeCharacter(at index: Int) -> (Character, Int)? {
        let lead = pending[index]
        let length = lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 1
        guard index + length <= pending.count else { return nil }
        let text = String(decoding: pending[index..<(index + length)], as: UTF8.self)
        return (text.first ?? "\u{FFFD}", length)
    }
}
