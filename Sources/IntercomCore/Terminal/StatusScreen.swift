import Glibc

/// What the talk-mode screen shows, independent of any terminal.
public struct StatusScreen: Sendable, Equatable {
    public struct Peer: Sendable, Equatable {
        public enum State: String, Sendable { case found, connected, talking }
        public var name: String
        public var address: String
        public var state: State
        /// Level of what we hear from the peer, as a meter position 0…1 (`meterLevel`).
        public var level: Double
        public var lossPercent: Double
        public var jitterMilliseconds: Double
        public var delayMilliseconds: Double
        /// How loud it plays here, in percent of how it was sent, and whether it is muted here.
        public var volumePercent: Int
        public var muted: Bool
        /// The peer the volume keys act on.
        public var selected: Bool
        /// The rooms it belongs to, and whom it talks to as far as we are concerned ("to you").
        public var rooms: [String]
        public var to: String
        /// What it sends is a page (played over the others).
        public var page: Bool

        public init(
            name: String, address: String, state: State, level: Double, lossPercent: Double,
            jitterMilliseconds: Double, delayMilliseconds: Double, volumePercent: Int = 100, muted: Bool = false,
            selected: Bool = false, rooms: [String] = [], to: String = "to all", page: Bool = false
        ) {
            self.name = name
            self.address = address
            self.state = state
            self.level = level
            self.lossPercent = lossPercent
            self.jitterMilliseconds = jitterMilliseconds
            self.delayMilliseconds = delayMilliseconds
            self.volumePercent = volumePercent
            self.muted = muted
            self.selected = selected
            self.rooms = rooms
            self.to = to
            self.page = page
        }

        /// How it plays here, when not as sent: "vol 125%", "muted here".
        public var listening: String? {
            if muted { return "muted here" }
            return volumePercent == 100 ? nil : "vol \(volumePercent)%"
        }

        /// A plain word for the link: what a person can act on. A peer we know of but have
        /// heard nothing from has no link to judge.
        public var quality: String {
            if state == .found { return "nothing heard" }
            if lossPercent >= 10 || jitterMilliseconds >= 40 || delayMilliseconds >= 200 { return "poor" }
            if lossPercent >= 3 || jitterMilliseconds >= 15 || delayMilliseconds >= 100 { return "fair" }
            return "good"
        }
    }

    public var name: String
    public var address: String
    public var mode: TalkMode
    /// How our voice is encoded now (`CodecMode.description`).
    public var codec: String
    public var transmitting: Bool
    public var muted: Bool
    /// Level of our microphone, as a meter position 0…1 (`meterLevel`).
    public var microphoneLevel: Double
    public var peers: [Peer]
    public var keyHelp: String
    /// Whom we talk to, and the targets the number keys pick (1 to 9, in order), shown when
    /// there is more than one.
    public var target: String
    public var targets: [String]
    /// One line of news (a warning, a peer that left), shown until replaced.
    public var notice: String?

    public init(
        name: String, address: String, mode: TalkMode, codec: String, transmitting: Bool, muted: Bool,
        microphoneLevel: Double, peers: [Peer], keyHelp: String, notice: String? = nil,
        target: String = "all", targets: [String] = []
    ) {
        self.name = name
        self.address = address
        self.mode = mode
        self.codec = codec
        self.transmitting = transmitting
        self.muted = muted
        self.microphoneLevel = microphoneLevel
        self.peers = peers
        self.keyHelp = keyHelp
        self.notice = notice
        self.target = target
        self.targets = targets
    }

    /// Where an amplitude (0…1, full scale 1) sits on a level meter: −50 dBFS and below is
    /// empty, full scale is full, like the meters people know from mixing desks.
    public static func meterLevel(amplitude: Double) -> Double {
        guard amplitude > 0 else { return 0 }
        return min(1, max(0, 1 + 20 * log10(amplitude) / 50))
    }

    /// The screen as lines no wider than `width` columns, with ANSI colour only if `colour`.
    /// Each line leads with its short status word, so a narrow terminal cuts the details.
    public func render(width: Int, colour: Bool) -> [String] {
        let width = max(width, 20)
        let style = Style(enabled: colour)
        var lines: [String] = []
        let tx = muted ? ("MUTED", style.dim("MUTED")) : transmitting ? (" TX ", style.inverseRed(" TX ")) : (" rx ", style.dim(" rx "))
        lines.append(line(tx, "intercom  \(name)  \(address)  mode \(mode.rawValue)", width: width))
        lines.append(line(("mic", "mic"), meter(microphoneLevel, width: min(30, width - 6)) + "  " + codec, width: width))
        lines.append(String(repeating: "─", count: width))
        if peers.isEmpty {
            lines.append(fit("no peers yet: waiting for discovery or --peer", width: width))
        }
        for peer in peers {
            let state = peer.page && peer.state == .talking ? "PAGE" : peer.state.rawValue
            let mark = peer.selected && peers.count > 1 ? "› " : ""
            // Whom a talker talks to matters only while it talks; a room it is in, always.
            let to = peer.state == .talking && peer.to != "to all" ? "  \(peer.to)" : ""
            let rooms = peer.rooms.isEmpty ? "" : "  [\(peer.rooms.joined(separator: ", "))]"
            lines.append(line((state, peer.state == .talking ? style.green(state) : state), "\(mark)\(peer.name)\(to)\(rooms)  \(peer.address)", width: width))
            let word = peer.quality
            let painted = word == "good" ? style.green(word) : word == "fair" ? style.yellow(word) : style.red(word)
            // How it plays here first: a muted peer is what a person looks for.
            let listening = peer.listening.map { "\($0)  " } ?? ""
            let figures = listening + meter(peer.level, width: 10)
                + " loss \(format(peer.lossPercent))%  jitter \(format(peer.jitterMilliseconds)) ms  delay \(format(peer.delayMilliseconds)) ms"
            lines.append("  " + line((word, painted), figures, width: width - 2))
        }
        lines.append(String(repeating: "─", count: width))
        if targets.count > 1 || target != "all" {
            let choices = targets.prefix(9).enumerated().map { "\($0.offset + 1) \($0.element)" }.joined(separator: "  ")
            lines.append(line(("to", target == "all" ? "to" : style.yellow("to")), "\(target)" + (choices.isEmpty ? "" : "   (\(choices))"), width: width))
        }
        if let notice { lines.append(fit(notice, width: width)) }
        lines.append(fit(keyHelp, width: width))
        return lines
    }

    /// A short token (plain, painted) and then as much of `rest` as fits.
    private func line(_ token: (plain: String, painted: String), _ rest: String, width: Int) -> String {
        let room = width - token.plain.count - 2
        return room > 1 ? token.painted + "  " + fit(rest, width: room) : fit(token.plain, width: width)
    }

    private func meter(_ level: Double, width: Int) -> String {
        let cells = max(1, width)
        let filled = Int((min(max(level, 0), 1) * Double(cells)).rounded())
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: cells - filled) + "]"
    }

    private func format(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }

    /// Cuts text to `width` columns, marking the cut.
    private func fit(_ text: String, width: Int) -> String {
        guard width > 1 else { return "" }
        return text.count <= width ? text : String(text.prefix(width - 1)) + "…"
    }

    private struct Style {
        let enabled: Bool
        func paint(_ text: String, _ code: String) -> String { enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        func green(_ text: String) -> String { paint(text, "32") }
        func yellow(_ text: String) -> String { paint(text, "33") }
        func red(_ text: String) -> String { paint(text, "31") }
        func dim(_ text: String) -> String { paint(text, "2") }
        func inverseRed(_ text: String) -> String { paint(text, "1;41;97") }
    }
}
