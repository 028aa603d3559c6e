/// A room a device belongs to, or a device's name as a target names it: 1 to 32 printable
/// characters (no control characters, no line breaks), so that it is safe wherever it is shown
/// and fits a hello.
public struct GroupName: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let text: String

    public static let maximumCharacters = 32
    /// The most rooms one device belongs to.
    public static let maximumRooms = 16

    /// Nil for an empty, too long or unprintable name.
    public init?(_ text: some StringProtocol) {
        guard !text.isEmpty, text.count <= Self.maximumCharacters, !text.unicodeScalars.contains(where: Self.isUnprintable) else { return nil }
        self.text = String(text)
    }

    /// Control characters and line and paragraph separators.
    public static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    public var description: String { text }
    public static func < (left: GroupName, right: GroupName) -> Bool { left.text < right.text }
}

/// Whom what this device says goes to.
public enum CallTarget: Hashable, Sendable, CustomStringConvertible {
    /// Every device in the call (the default).
    case all
    /// The devices in a room; the sender need not be in it.
    case room(GroupName)
    /// One device, by its name (as paired, or its own `--name` for a process of our own
    /// identity) or its key's fingerprint: a whisper, sent to it alone.
    case device(GroupName)

    /// Reads `all`, `room:NAME`, or a device's name or fingerprint.
    public init(parsing text: String) throws(CallTargetError) {
        if text == "all" {
            self = .all
        } else if text.hasPrefix("room:") {
            guard let name = GroupName(text.dropFirst("room:".count)) else { throw .badName(text) }
            self = .room(name)
        } else {
            guard let name = GroupName(text) else { throw .badName(text) }
            self = .device(name)
        }
    }

    /// As `init(parsing:)` reads it.
    public var description: String {
        switch self {
        case .all: "all"
        case .room(let name): "room:\(name)"
        case .device(let name): name.text
        }
    }
}

public enum CallTargetError: Error, Equatable, CustomStringConvertible {
    case badName(String)
    case tooManyRooms(Int)

    public var description: String {
        switch self {
        case .badName(let text):
            "'\(TerminalText.sanitized(text.prefix(40)))' is not a target: 'all', 'room:NAME' or a device's name or fingerprint, names 1 to \(GroupName.maximumCharacters) printable characters"
        case .tooManyRooms(let count):
            "\(count) rooms: a device belongs to at most \(GroupName.maximumRooms)"
        }
    }
}

/// What a receiver is told about a talker's target, in the hello the talker sends it: the
/// whole call, a room (by name), or this receiver alone.
public enum HeardTarget: Hashable, Sendable, CustomStringConvertible {
    case all
    case room(GroupName)
    case you

    /// "to all", "to kitchen", "to you".
    public var description: String {
        switch self {
        case .all: "to all"
        case .room(let name): "to \(name)"
        case .you: "to you"
        }
    }
}
