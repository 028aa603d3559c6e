/// Every setting the configuration file may hold: its table and key, the command-line
/// option it stands for, and what values it takes.
public enum ConfigurationSchema {
    public enum Kind: Sendable {
        case integer(ClosedRange<Int>)
        case number(ClosedRange<Double>)
        case text
        case choice([String])
        /// A list of strings, one option occurrence each (`--peer A --peer B`).
        case list
        /// On/off: `--OPTION` or `--no-OPTION`.
        case toggle
    }

    public struct Setting: Sendable {
        public let table: String
        public let key: String
        /// The long option it feeds, without dashes.
        public let option: String
        public let kind: Kind
        public let help: String

        public var path: String { "\(table).\(key)" }
    }

    public static let settings: [Setting] = [
        .init(table: "audio", key: "capture", option: "capture", kind: .text, help: "ALSA capture device"),
        .init(table: "audio", key: "playback", option: "playback", kind: .text, help: "ALSA playback device"),
        .init(table: "audio", key: "buffer-ms", option: "audio-buffer-ms", kind: .integer(10...1000), help: "sound card buffer"),
        .init(table: "audio", key: "frame-ms", option: "frame-ms", kind: .choice(["5", "10", "20"]), help: "a fixed Opus frame length (default: adaptive)"),
        .init(table: "audio", key: "bitrate", option: "bitrate", kind: .integer(6_000...510_000), help: "Opus bitrate"),
        .init(table: "audio", key: "fec", option: "fec", kind: .toggle, help: "in-band FEC"),
        .init(table: "audio", key: "dtx", option: "dtx", kind: .toggle, help: "discontinuous transmission"),
        .init(table: "audio", key: "aec", option: "aec", kind: .toggle, help: "echo cancellation"),
        .init(table: "audio", key: "echo-tail-ms", option: "echo-tail-ms", kind: .integer(10...2000), help: "echo tail"),
        .init(table: "audio", key: "denoise", option: "denoise", kind: .toggle, help: "noise suppression"),
        .init(table: "audio", key: "agc", option: "agc", kind: .toggle, help: "automatic gain control"),
        .init(table: "network", key: "port", option: "port", kind: .integer(0...65535), help: "UDP port"),
        .init(table: "network", key: "bind", option: "bind", kind: .text, help: "the one local address to listen on"),
        .init(table: "network", key: "peers", option: "peer", kind: .list, help: "static peers, HOST:PORT"),
        .init(table: "network", key: "discovery", option: "discovery", kind: .toggle, help: "mDNS discovery"),
        .init(table: "network", key: "name", option: "name", kind: .text, help: "the name peers see"),
        .init(table: "call", key: "rooms", option: "room", kind: .list, help: "rooms this device belongs to"),
        .init(table: "call", key: "to", option: "to", kind: .text, help: "whom this device talks to: all, room:NAME or a device"),
        .init(table: "call", key: "pages", option: "pages", kind: .toggle, help: "play pages"),
        .init(table: "call", key: "page-ducking-db", option: "page-ducking-db", kind: .integer(0...40), help: "how much quieter the others play under a page"),
        .init(table: "talk", key: "mode", option: "mode", kind: .choice(["ptt", "vox", "open"]), help: "when to transmit"),
        .init(table: "talk", key: "vox-threshold", option: "vox-threshold", kind: .integer(1...99), help: "VOX speech probability"),
        .init(table: "talk", key: "ptt-device", option: "ptt-device", kind: .text, help: "evdev talk button"),
        .init(table: "talk", key: "ptt-key", option: "ptt-key", kind: .list, help: "evdev talk keys, NAME or NAME=TARGET"),
        .init(table: "talk", key: "ptt-max-seconds", option: "ptt-max-seconds", kind: .number(0.5...3600), help: "longest transmission"),
        .init(table: "talk", key: "ptt-latch", option: "ptt-latch", kind: .toggle, help: "tap to talk"),
        .init(table: "talk", key: "ptt-gpio", option: "ptt-gpio", kind: .list, help: "GPIO talk buttons, CHIP:LINE or CHIP:LINE=TARGET"),
        .init(table: "talk", key: "gpio-active-high", option: "gpio-active-high", kind: .toggle, help: "button polarity"),
        .init(table: "talk", key: "tx-lamp-gpio", option: "tx-lamp-gpio", kind: .text, help: "GPIO lamp while transmitting"),
        .init(table: "talk", key: "rx-lamp-gpio", option: "rx-lamp-gpio", kind: .text, help: "GPIO lamp while receiving"),
        .init(table: "talk", key: "tones", option: "tones", kind: .toggle, help: "talk tones"),
        .init(table: "talk", key: "ptt-hold-ms", option: "ptt-hold-ms", kind: .integer(100...2000), help: "hold detection timeout"),
    ]

    public static func setting(table: String, key: String) -> Setting? {
        settings.first { $0.table == table && $0.key == key }
    }
}
