/// Reads the Linux evdev event stream (`struct input_event`, 24 bytes on 64-bit systems) of
/// a keyboard, foot switch or button, and reports one key's down, repeat and up.
public struct EvdevKeyEvents: Sendable {
    /// The key code (linux/input-event-codes.h) to follow.
    public let keyCode: UInt16
    private var pending: [UInt8] = []

    /// Size of `struct input_event` with a 64-bit `struct timeval`.
    public static let eventSize = 24
    private static let keyEventType: UInt16 = 1  // EV_KEY

    public init(keyCode: UInt16) { self.keyCode = keyCode }

    /// Feeds bytes read from the device; returns the talk key's events among them.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [PushToTalk.KeyEvent] {
        pending.append(contentsOf: bytes)
        var events: [PushToTalk.KeyEvent] = []
        var offset = 0
        while offset + Self.eventSize <= pending.count {
            let type = UInt16(pending[offset + 16]) | UInt16(pending[offset + 17]) << 8
            let code = UInt16(pending[offset + 18]) | UInt16(pending[offset + 19]) << 8
            let value = Int32(bitPattern: UInt32(pending[offset + 20]) | UInt32(pending[offset + 21]) << 8
                | UInt32(pending[offset + 22]) << 16 | UInt32(pending[offset + 23]) << 24)
            if type == Self.keyEventType, code == keyCode {
                switch value {
                case 0: events.append(.release)
                case 1: events.append(.press)
                case 2: events.append(.repeat)
                default: break
                }
            }
            offset += Self.eventSize
        }
        pending.removeFirst(offset)
        return events
    }

    /// One event as the kernel writes it, for tests and recordings.
    public static func encode(type: UInt16, code: UInt16, value: Int32, seconds: Int64 = 0, microseconds: Int64 = 0) -> [UInt8] {
        func little<T: FixedWidthInteger>(_ value: T) -> [UInt8] { (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        return little(seconds) + little(microseconds) + little(type) + little(code) + little(UInt32(bitPattern: value))
    }

    /// Key codes by the names a user may give (`--ptt-key space`, `KEY_F13`, or a number).
    public static func keyCode(named name: String) -> UInt16? {
        if let number = UInt16(name) { return number }
        let key = name.uppercased().hasPrefix("KEY_") || name.uppercased().hasPrefix("BTN_") ? name.uppercased() : "KEY_" + name.uppercased()
        return knownKeys[key]
    }

    static let knownKeys: [String: UInt16] = [
        "KEY_ESC": 1, "KEY_TAB": 15, "KEY_ENTER": 28, "KEY_LEFTCTRL": 29, "KEY_LEFTSHIFT": 42, "KEY_RIGHTSHIFT": 54,
        "KEY_LEFTALT": 56, "KEY_SPACE": 57, "KEY_CAPSLOCK": 58, "KEY_F1": 59, "KEY_F2": 60, "KEY_F3": 61, "KEY_F4": 62,
        "KEY_F5": 63, "KEY_F6": 64, "KEY_F7": 65, "KEY_F8": 66, "KEY_F9": 67, "KEY_F10": 68, "KEY_SCROLLLOCK": 70,
        "KEY_F11": 87, "KEY_F12": 88, "KEY_RIGHTCTRL": 97, "KEY_RIGHTALT": 100, "KEY_PAUSE": 119, "KEY_LEFTMETA": 125,
        "KEY_RIGHTMETA": 126, "KEY_F13": 183, "KEY_F14": 184, "KEY_F15": 185, "KEY_F16": 186, "KEY_F17": 187,
        "KEY_F18": 188, "KEY_F19": 189, "KEY_F20": 190, "BTN_0": 0x100, "BTN_1": 0x101, "BTN_LEFT": 0x110,
        "BTN_RIGHT": 0x111, "BTN_MIDDLE": 0x112, "BTN_TRIGGER": 0x120,
    ]
}
