import IntercomCore
import IntercomDSP

/// Every setting a call may be given, each declared once: its place in the configuration file
/// (table and key), the command-line option it is (`--OPTION`), what values it takes, its
/// default and its help. The command line's options take their name, help, range and default
/// from here; the file reader checks values against it; `intercom config` lists it.
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
        /// The long option it is, without dashes.
        public let option: String
        public let kind: Kind
        /// What the command line's help calls its value (`MS`, `HOST:PORT`).
        public let valueName: String?
        /// The value in use when neither the command line nor the file gives one; nil where it
        /// depends on the machine or on other settings (`defaultText` says how).
        public let defaultValue: ConfigurationText.Value?
        /// The default as the help states it.
        public let defaultText: String?
        /// A valid value that is not the default, for examples and tests.
        public let example: ConfigurationText.Value
        public let help: String

        init(
            _ table: String, _ key: String, option: String? = nil, _ kind: Kind, valueName: String? = nil,
            default defaultValue: ConfigurationText.Value? = nil, defaultText: String? = nil, example: ConfigurationText.Value, help: String
        ) {
            self.table = table
            self.key = key
            self.option = option ?? key
            self.kind = kind
            self.valueName = valueName
            self.defaultValue = defaultValue
            self.defaultText = defaultText ?? defaultValue.map(Self.describe)
            self.example = example
            self.help = help
        }

        public var path: String { "\(table).\(key)" }

        /// The help as the command line shows it, its default said last.
        public var helpWithDefault: String {
            defaultText.map { "\(help) Default: \($0)." } ?? help
        }

        /// Whether `value` is one this setting takes (`intercom` checks the command line's with
        /// the same ranges and choices as the file's).
        public func accepts(_ value: ConfigurationText.Value) -> Bool {
            switch (kind, value) {
            case (.integer(let range), .integer(let number)): range.contains(number)
            case (.number(let range), .integer(let number)): range.contains(Double(number))
            case (.number(let range), .float(let number)): range.contains(number)
            case (.text, .string(let text)): !text.isEmpty
            case (.choice(let choices), .string(let text)): choices.contains(text)
            case (.choice(let choices), .integer(let number)): choices.contains("\(number)")
            // A list of one may be written as its one string (as `ptt-gpio` was, before a
            // device could have several buttons).
            case (.list, .string(let text)): !text.isEmpty
            case (.list, .array(let items)): items.allSatisfy { if case .string = $0 { true } else { false } }
            case (.toggle, .boolean): true
            default: false
            }
        }

        /// What a value must be, for messages.
        public var expectation: String {
            switch kind {
            case .integer(let range): "expected a whole number from \(range.lowerBound) to \(range.upperBound)"
            case .number(let range): "expected a number from \(range.lowerBound) to \(range.upperBound)"
            case .text: "expected a non-empty string"
            case .choice(let choices): "expected one of " + choices.joined(separator: ", ")
            case .list: "expected a list of strings"
            case .toggle: "expected true or false"
            }
        }

        private static func describe(_ value: ConfigurationText.Value) -> String {
            switch value {
            case .boolean(let flag): flag ? "on" : "off"
            case .string(let text): text
            case .integer(let number): "\(number)"
            case .float(let number): number == number.rounded() ? "\(Int(number))" : number.fixed(1)
            case .array(let items): items.map(describe).joined(separator: ", ")
            }
        }
    }

    // MARK: [audio]

    public static let capture = Setting(
        "audio", "capture", .text, valueName: "DEVICE", default: .string("default"), example: .string("plughw:1"),
        help: "ALSA device to capture from.")
    public static let playback = Setting(
        "audio", "playback", .text, valueName: "DEVICE", default: .string("default"), example: .string("plughw:1"),
        help: "ALSA device to play to.")
    public static let bufferMilliseconds = Setting(
        "audio", "buffer-ms", option: "audio-buffer-ms", .integer(10...1000), valueName: "MS", default: .integer(20), example: .integer(40),
        help: "Sound card buffer: the speaker's is kept full, so all of it is delay; raise it if underruns are counted (intercom status).")
    private static let piFrame = AudioProfile.pi.frameMilliseconds.map(String.init) ?? "adaptive"
    private static let piBitrate = AudioProfile.pi.bitrate ?? OpusEncoderConfiguration().bitrate
    private static let piPeriod = Int(AudioProfile.pi.longestDevicePeriod.milliseconds)
    public static let profile = Setting(
        "audio", "profile", .choice(AudioProfile.allCases.map(\.rawValue)), valueName: "PROFILE",
        default: .string(AudioProfile.standard.rawValue), example: .string(AudioProfile.pi.rawValue),
        help: "The codec's and sound cards' preset: standard (adaptive frames, the lowest delay) or pi (fixed \(piFrame) ms frames at \(piBitrate) b/s and \(piPeriod) ms sound-card periods: a quarter of the packets of 5 ms frames, half the device wake-ups, more delay). --frame-ms and --bitrate still win.")
    public static let frameMilliseconds = Setting(
        "audio", "frame-ms", .choice(OpusEncoderConfiguration.allowedFrameMilliseconds.map(String.init)), valueName: "MS",
        defaultText: "adaptive, 5 ms of low-delay CELT while someone speaks on a clean link, 10 ms with FEC otherwise; 10 from a file; \(piFrame) with --profile pi",
        example: .integer(20),
        help: "A fixed Opus frame length: 5, 10 or 20.")
    public static let bitrate = Setting(
        "audio", "bitrate", .integer(OpusEncoderConfiguration.allowedBitrates), valueName: "BPS",
        default: .integer(OpusEncoderConfiguration().bitrate),
        defaultText: "\(OpusEncoderConfiguration().bitrate); \(piBitrate) with --profile pi", example: .integer(64_000),
        help: "Opus bitrate in bits per second, for a stream up to three devices hear; one that more hear is coded at about three copies' worth shared among them, never below \(ListenerBudget.lowestSharedBitrate) (each device is sent a copy of its own).")
    public static let forwardErrorCorrection = Setting(
        "audio", "fec", .toggle, default: .boolean(true), example: .boolean(false),
        help: "Send in-band forward error correction.")
    public static let discontinuousTransmission = Setting(
        "audio", "dtx", .toggle, default: .boolean(OpusEncoderConfiguration().discontinuousTransmission), example: .boolean(false),
        help: "Discontinuous transmission: send almost nothing in silence.")
    public static let echoCancellation = Setting(
        "audio", "aec", .toggle, default: .boolean(true), example: .boolean(false),
        help: "Cancel the speaker's echo in the microphone.")
    public static let echoTailMilliseconds = Setting(
        "audio", "echo-tail-ms", .integer(10...2000), valueName: "MS",
        default: .integer(EchoCanceller.Model.standard.tailMilliseconds), example: .integer(150),
        help: "The longest echo path to cancel (a ringing room needs more; each millisecond costs CPU).")
    public static let echoDistortion = Setting(
        "audio", "echo-distortion", .toggle,
        default: .boolean(EchoCanceller.Model.standard.cancelsDistortion), example: .boolean(false),
        help: "Also cancel the echo of a speaker that distorts (a small laptop speaker played loud): far better double talk; off saves about a sixth of the audio processing's instructions and, with a shorter tail, cancels more through a speaker that does not distort in a room that does not ring.")
    public static let denoise = Setting(
        "audio", "denoise", .toggle, default: .boolean(true), example: .boolean(false),
        help: "Suppress background noise and keyboard clicks.")
    public static let automaticGainControl = Setting(
        "audio", "agc", .toggle, default: .boolean(true), example: .boolean(false),
        help: "Adjust the microphone level automatically.")

    // MARK: [network]

    public static let port = Setting(
        "network", "port", .integer(0...65535), valueName: "PORT", default: .integer(5004), example: .integer(6001),
        help: "UDP port to listen on.")
    public static let bind = Setting(
        "network", "bind", .text, valueName: "ADDRESS", example: .string("127.0.0.1"),
        help: "Listen for the call on this local address only (mDNS then announces that interface alone).")
    public static let peers = Setting(
        "network", "peers", option: "peer", .list, valueName: "HOST:PORT", example: .array([.string("10.0.0.2:5004")]),
        help: "A peer to call, without discovery (repeatable; replaces the configuration file's peers).")
    public static let discovery = Setting(
        "network", "discovery", .toggle, default: .boolean(true), example: .boolean(false),
        help: "Publish and browse mDNS; without it, call only --peer peers.")
    public static let name = Setting(
        "network", "name", .text, valueName: "NAME", defaultText: "the host's name", example: .string("hall"),
        help: "The name other peers see.")

    // MARK: [call]

    public static let rooms = Setting(
        "call", "rooms", option: "room", .list, valueName: "NAME", example: .array([.string("kitchen")]),
        help: "A room this device belongs to (repeatable, at most 16; replaces the configuration file's rooms): 'room:NAME' targets reach it. Its paired devices are told inside the encrypted call.")
    public static let target = Setting(
        "call", "to", .text, valueName: "TARGET", default: .string(CallTarget.all.description), example: .string("room:kitchen"),
        help: "Whom this device talks to: 'all', 'room:NAME' (the devices in that room), or one device by its name or fingerprint (a whisper: the others get none of it).")
    public static let pages = Setting(
        "call", "pages", .toggle, default: .boolean(true), example: .boolean(false),
        help: "Play pages ('intercom page': a chime or a message, over everything else, even from a device muted here).")
    public static let pageDuckingDecibels = Setting(
        "call", "page-ducking-db", .integer(0...40), valueName: "DB", default: .integer(15), example: .integer(20),
        help: "How much quieter the other devices play while a page plays.")

    // MARK: [talk]

    public static let mode = Setting(
        "talk", "mode", .choice(TalkMode.allCases.map(\.rawValue)), valueName: "MODE",
        defaultText: "ptt at a terminal or with a talk button, vox on a headless device, open otherwise (files, scripts)",
        example: .string("vox"),
        help: "When to transmit: ptt (while the talk key is held), vox (on speech) or open (always).")
    public static let voxThreshold = Setting(
        "talk", "vox-threshold", .integer(1...99), valueName: "PERCENT", default: .integer(80), example: .integer(60),
        help: "Speech probability (percent) that opens the VOX gate.")
    public static let pttDevice = Setting(
        "talk", "ptt-device", .text, valueName: "/dev/input/eventN", example: .string("/dev/input/event3"),
        help: "Talk button from this evdev device (a foot switch, a spare keyboard).")
    public static let pttKeys = Setting(
        "talk", "ptt-key", .list, valueName: "NAME[=TARGET]", default: .array([.string("space")]), example: .array([.string("KEY_F13=room:kitchen")]),
        help: "A --ptt-device key that talks, by name (space, KEY_F13, BTN_0) or code; repeatable, each with the target it talks to while held: KEY_F13=room:kitchen.")
    public static let pttMaxSeconds = Setting(
        "talk", "ptt-max-seconds", .number(0.5...3600), valueName: "SECONDS", default: .float(120), example: .float(30.5),
        help: "The longest a held (or stuck) talk key transmits.")
    public static let pttLatch = Setting(
        "talk", "ptt-latch", .toggle, default: .boolean(false), example: .boolean(true),
        help: "Tap the talk key to start talking, tap again to stop.")
    public static let pttGPIO = Setting(
        "talk", "ptt-gpio", .list, valueName: "CHIP:LINE[=TARGET]", example: .array([.string("gpiochip0:17")]),
        help: "A talk button on a GPIO line (debounced), e.g. gpiochip0:17; repeatable, each with the target it talks to while held: gpiochip0:17=room:kitchen.")
    public static let gpioActiveHigh = Setting(
        "talk", "gpio-active-high", .toggle, default: .boolean(false), example: .boolean(true),
        help: "The GPIO button drives its line high when pressed (off: it shorts it to ground).")
    public static let transmitLampGPIO = Setting(
        "talk", "tx-lamp-gpio", .text, valueName: "CHIP:LINE", example: .string("gpiochip0:22"),
        help: "A GPIO line lit while transmitting.")
    public static let receiveLampGPIO = Setting(
        "talk", "rx-lamp-gpio", .text, valueName: "CHIP:LINE", example: .string("gpiochip0:23"),
        help: "A GPIO line lit while a peer talks.")
    public static let tones = Setting(
        "talk", "tones", .toggle, default: .boolean(false), example: .boolean(true),
        help: "Short tones at both ends when a transmission starts and ends, like a two-way radio.")
    public static let pttHoldMilliseconds = Setting(
        "talk", "ptt-hold-ms", .integer(100...2000), valueName: "MS", default: .integer(650), example: .integer(500),
        help: "Without key-release events: how long after a press the key counts as held until it repeats (covers the keyboard's initial repeat delay).")

    /// Every setting, in the order `intercom config` lists them.
    public static let settings: [Setting] = [
        capture, playback, bufferMilliseconds, profile, frameMilliseconds, bitrate, forwardErrorCorrection, discontinuousTransmission,
        echoCancellation, echoTailMilliseconds, echoDistortion, denoise, automaticGainControl,
        port, bind, peers, discovery, name,
        rooms, target, pages, pageDuckingDecibels,
        mode, voxThreshold, pttDevice, pttKeys, pttMaxSeconds, pttLatch, pttGPIO, gpioActiveHigh, transmitLampGPIO, receiveLampGPIO,
        tones, pttHoldMilliseconds,
    ]

    /// The file's tables, in the order of the settings.
    public static var tables: [String] {
        settings.map(\.table).reduce(into: []) { tables, table in if tables.last != table { tables.append(table) } }
    }

    public static func setting(table: String, key: String) -> Setting? {
        settings.first { $0.table == table && $0.key == key }
    }
}
