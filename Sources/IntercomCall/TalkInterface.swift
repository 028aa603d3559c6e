import Glibc
import IntercomCore
import IntercomIO
import Synchronization

/// Talk mode's user interface, on its own thread: reads the keyboard (and an evdev talk
/// button), runs the push-to-talk state machine, and shows the call on the status screen,
/// or as plain lines when standard output is not a terminal.
///
/// This is the handle other threads hold; everything the interface changes as it runs is in
/// its `InterfaceLoop`, which the interface thread alone owns once started.
public final class TalkInterface: Sendable {
    public struct Options: Sendable {
        /// Tap the terminal's talk key to start and again to stop (told from its auto-repeat);
        /// otherwise it is held, through the kitty protocol's exact press and release where
        /// the terminal has it, else through auto-repeat detection.
        public var latch = false
        /// Without release events: how long after a press the key counts as held until it repeats.
        public var keyHold: Duration = .milliseconds(650)
        public var talkKey: Character = " "
        public var maximumTransmit: Duration = .seconds(120)
        public var colour = Terminal.supportsColour

        public init() {}
    }

    /// Talk buttons and lamps on GPIO lines (a Raspberry Pi's header).
    public struct GPIOControls {
        /// Each button talks, while held, to its target (nil: the call's own).
        public var talkButtons: [(line: GPIOLine, target: CallTarget?)]
        public var transmitLamp: GPIOLine?
        public var receiveLamp: GPIOLine?

        public init(talkButtons: [(line: GPIOLine, target: CallTarget?)] = [], transmitLamp: GPIOLine? = nil, receiveLamp: GPIOLine? = nil) {
            self.talkButtons = talkButtons
            self.transmitLamp = transmitLamp
            self.receiveLamp = receiveLamp
        }
    }

    /// Talk keys on an evdev device (a foot switch, a spare keyboard), each with its target.
    public struct EvdevControls {
        public var device: EvdevDevice
        public var keys: [(code: UInt16, target: CallTarget?)]

        public init(device: EvdevDevice, keys: [(code: UInt16, target: CallTarget?)]) {
            self.device = device
            self.keys = keys
        }
    }

    private let terminal: Terminal?
    private let options: Options
    /// Made with the interface, handed to its thread by `start()`.
    private let waiting: Mutex<InterfaceLoop?>
    private let thread = Mutex<JoinableThread?>(nil)
    private let stopping = SharedFlag()
    /// Yields when the user presses the quit key.
    public let quitRequests: AsyncStream<Void>

    public init(
        call: Call, options: Options, terminal: Terminal?, button: sending EvdevControls?, gpio: sending GPIOControls = .init()
    ) {
        let (quitRequests, quit) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.quitRequests = quitRequests
        self.options = options
        self.terminal = terminal
        waiting = Mutex(InterfaceLoop(call: call, options: options, terminal: terminal, button: button, gpio: gpio, quit: quit))
    }

    /// Takes over the terminal and starts the interface thread.
    public func start() throws {
        guard let loop = waiting.withLock({ $0.take() }) else { return }
        if let terminal {
            try terminal.enter()
            if !options.latch { loop.terminalReportsKeys(exactly: terminal.enableKeyEventTypes()) }
        }
        let stopping = self.stopping
        let started = try JoinableThread(name: "interface") { loop.run(until: stopping) }
        thread.withLock { $0 = started }
    }

    /// Stops the thread (which puts the lamps out) and gives the terminal back as it was.
    public func stop() {
        stopping.value.store(true, ordering: .relaxed)
        thread.withLock { $0.take() }?.join()
        terminal?.restore()
    }

    /// What keeps the call from working as it should, in words a person can act on.
    static func faults(in statistics: CallStatistics) -> [String] {
        var faults: [String] = []
        if let device = statistics.captureDevice, !device.open {
            faults.append("no microphone: '\(device.name)' is missing (retrying)")
        }
        if let device = statistics.playbackDevice, !device.open {
            faults.append("no speaker: '\(device.name)' is missing (retrying)")
        }
        if let discovery = statistics.discovery.fault { faults.append(discovery) }
        return faults
    }
}

/// The interface's state and its work, on the interface thread.
private final class InterfaceLoop {
    typealias Options = TalkInterface.Options
    typealias GPIOControls = TalkInterface.GPIOControls

    /// One talk button or key: its push-to-talk machine and the target it talks to.
    private struct TalkControl {
        var talk: PushToTalk
        let target: CallTarget?
        var debouncer = ButtonDebouncer()
        var keyEvents: EvdevKeyEvents?
    }

    private let call: Call
    private let options: Options
    private let gpio: GPIOControls
    /// One per GPIO talk button, in `gpio.talkButtons`' order.
    private var gpioTalks: [TalkControl]
    private var lampsLit: (transmit: Bool, receive: Bool)?
    private let terminal: Terminal?
    private let buttonDevice: EvdevDevice?
    /// One per evdev talk key.
    private var keyTalks: [TalkControl]
    private var terminalTalk: PushToTalk
    /// The control whose target is in force while it talks (a button with a target of its own).
    private var targetHeldBy: (gpio: Bool, index: Int)?
    private var parser = TerminalInputParser()
    private var muted = false
    private var selectedPeer = 0
    /// How loud each stream of a peer that is not a paired device plays, for this call only
    /// (a paired device's is remembered in the trusted list).
    private var volumes: [UInt32: PeerListening] = [:]
    private var notice: String?
    private var lastDrawn: [String] = []
    private var lastPlainLine = ""
    private let quitContinuation: AsyncStream<Void>.Continuation

    init(call: Call, options: Options, terminal: Terminal?, button: TalkInterface.EvdevControls?, gpio: GPIOControls, quit: AsyncStream<Void>.Continuation) {
        quitContinuation = quit
        self.call = call
        self.options = options
        self.gpio = gpio
        let maximum = MediaTime.nanoseconds(options.maximumTransmit)
        gpioTalks = gpio.talkButtons.map { TalkControl(talk: PushToTalk(style: .exact, maximumTransmitNanoseconds: maximum), target: $0.target) }
        self.terminal = terminal
        buttonDevice = button?.device
        keyTalks = (button?.keys ?? []).map { key in
            TalkControl(talk: PushToTalk(style: .exact, maximumTransmitNanoseconds: maximum), target: key.target, keyEvents: EvdevKeyEvents(keyCode: key.code))
        }
        terminalTalk = PushToTalk(style: Self.repeatingStyle(options), maximumTransmitNanoseconds: maximum)
    }

    /// The terminal key's style where it reports presses and repeats but no releases.
    private static func repeatingStyle(_ options: Options) -> PushToTalk.Style {
        let hold = MediaTime.nanoseconds(options.keyHold)
        return options.latch
            ? .latch(initialDelayTimeout: hold, repeatTimeout: PushToTalk.Style.repeatTimeout)
            : .autoRepeat(initialDelayTimeout: hold, repeatTimeout: PushToTalk.Style.repeatTimeout)
    }

    /// Whether the terminal reports the talk key's press and release exactly (the kitty
    /// keyboard protocol) or only presses and repeats.
    func terminalReportsKeys(exactly exact: Bool) {
        terminalTalk = PushToTalk(
            style: exact ? .exact : Self.repeatingStyle(options), maximumTransmitNanoseconds: MediaTime.nanoseconds(options.maximumTransmit))
        notice = exact ? "talk key: exact press and release (kitty keyboard protocol)" : "talk key: held while it repeats"
    }

    /// Runs until `stopping` is set, then puts the lamps out.
    func run(until stopping: SharedFlag) {
        defer {
            gpio.transmitLamp?.write(false)
            gpio.receiveLamp?.write(false)
        }
        var nextDraw: UInt64 = 0
        // Keys and buttons are read every 10 ms; with none (a headless device on VOX), the
        // thread wakes only to draw, ten times a second instead of a hundred.
        let readsControls = terminal != nil || (buttonDevice != nil && !keyTalks.isEmpty) || !gpioTalks.isEmpty
        let turn = MediaTime.nanoseconds(.milliseconds(readsControls ? 10 : 100))
        while !stopping.value.load(ordering: .relaxed) {
            let bytes = terminal?.read(timeoutMilliseconds: 10) ?? []
            if terminal == nil { SystemClock.sleep(untilMonotonic: SystemClock.monotonicNanoseconds() + turn) }
            let now = SystemClock.monotonicNanoseconds()
            for event in parser.feed(bytes) { handle(event, now: now) }
            if bytes.isEmpty { for event in parser.flushLoneEscape() { handle(event, now: now) } }
            if let buttonDevice, !keyTalks.isEmpty {
                let bytes = buttonDevice.readAvailable()
                for index in keyTalks.indices {
                    for event in keyTalks[index].keyEvents?.feed(bytes) ?? [] { keyTalks[index].talk.handle(event, now: now) }
                }
            }
            for index in gpioTalks.indices {
                if let event = gpioTalks[index].debouncer.sample(pressed: gpio.talkButtons[index].line.read(), now: now) {
                    gpioTalks[index].talk.handle(event, now: now)
                }
            }
            terminalTalk.tick(now: now)
            for index in keyTalks.indices { keyTalks[index].talk.tick(now: now) }
            for index in gpioTalks.indices { gpioTalks[index].talk.tick(now: now) }
            followButtonTargets()
            call.setTalkKey(held: terminalTalk.isTransmitting || keyTalks.contains { $0.talk.isTransmitting } || gpioTalks.contains { $0.talk.isTransmitting })
            if now >= nextDraw {
                let screen = screen()
                show(screen)
                light(transmit: screen.transmitting, receive: screen.peers.contains { $0.state == .talking })
                nextDraw = now + MediaTime.nanoseconds(.milliseconds(100))
            }
        }
    }

    /// A button with a target of its own talks to it while held (the first pressed wins while
    /// several are); once it is let go, the chosen target (the configured one, or a reload's)
    /// is back.
    private func followButtonTargets() {
        if let held = targetHeldBy {
            let stillTalking = held.gpio ? gpioTalks[held.index].talk.isTransmitting : keyTalks[held.index].talk.isTransmitting
            guard !stillTalking else { return }
            targetHeldBy = nil
            call.holdTarget(nil)
        }
        for (gpio, controls) in [(true, gpioTalks), (false, keyTalks)] {
            guard let index = controls.indices.first(where: { controls[$0].talk.isTransmitting && controls[$0].target != nil }),
                  let target = controls[index].target else { continue }
            targetHeldBy = (gpio, index)
            call.holdTarget(target)
            return
        }
    }

    /// Drives each lamp only when its state changes.
    private func light(transmit: Bool, receive: Bool) {
        if lampsLit?.transmit != transmit { gpio.transmitLamp?.write(transmit) }
        if lampsLit?.receive != receive { gpio.receiveLamp?.write(receive) }
        lampsLit = (transmit, receive)
    }

    private func handle(_ event: TerminalInputParser.Event, now: UInt64) {
        guard case .key(let key, let modifiers, let type) = event else { return }
        if key == .character(options.talkKey) {
            switch type {
            case .press: terminalTalk.handle(.press, now: now)
            case .repeat: terminalTalk.handle(.repeat, now: now)
            case .release: terminalTalk.handle(.release, now: now)
            }
            return
        }
        guard type != .release else { return }
        switch key {
        case .character("q"), .character("Q"):
            quitContinuation.yield()
        case .character("c") where modifiers.contains(.control):
            quitContinuation.yield()
        case .character("m"), .character("M"):
            muted.toggle()
            call.setMuted(muted)
        case .up, .left: selectedPeer = max(0, selectedPeer - 1)
        case .down, .right: selectedPeer += 1
        case .character("+"), .character("="): changeListening { $0 = $0.stepped(louder: true) }
        case .character("-"): changeListening { $0 = $0.stepped(louder: false) }
        case .character("x"), .character("X"): changeListening { $0.muted.toggle() }
        case .character(let digit) where ("1"..."9").contains(digit):
            pickTarget(Int(String(digit))! - 1)
        default: break
        }
    }

    /// Whom the number keys can pick: everyone, each room we or a peer belong to, then each
    /// peer by its name. Picking is instant (the next packet goes to the new target).
    private func targets(_ statistics: CallStatistics) -> [CallTarget] {
        let rooms = Set(call.rooms + statistics.peers.flatMap { $0.rooms.compactMap { GroupName($0) } })
        let devices = statistics.peers.compactMap { $0.name.flatMap { GroupName($0) } }
        var seen = Set<CallTarget>()
        return ([.all] + rooms.sorted().map(CallTarget.room) + devices.map(CallTarget.device)).filter { seen.insert($0).inserted }
    }

    private func pickTarget(_ index: Int) {
        let choices = targets(call.statistics())
        guard choices.indices.contains(index) else { return }
        call.setTarget(choices[index])
        notice = "talking to \(choices[index])"
    }

    /// Changes how loud the selected peer plays: for a paired device, the setting remembered
    /// with it (as `intercom volume` and `intercom mute` do), which the call applies within
    /// milliseconds; for any other, its stream's gain for this call.
    private func changeListening(_ change: (inout PeerListening) -> Void) {
        let peers = call.statistics().peers
        guard !peers.isEmpty else { return }
        selectedPeer = min(selectedPeer, peers.count - 1)
        let peer = peers[selectedPeer]
        if let fingerprint = peer.fingerprint, peer.listening != nil, let store = call.configuration.security?.trustedDevices {
            do {
                try store.changeListening(matching: fingerprint, change)
                call.trustedListChanged()
            } catch {
                notice = "could not change the volume of \(peer.name ?? peer.address): \(TerminalText.sanitized("\(error)"))"
            }
            return
        }
        guard let ssrc = peer.ssrc else { return }
        var listening = volumes[ssrc] ?? .asSent
        change(&listening)
        volumes[ssrc] = listening
        call.setVolume(listening.gain, ssrc: ssrc)
    }

    private func screen() -> StatusScreen {
        let statistics = call.statistics()
        let streams = Dictionary(statistics.streams.map { ($0.ssrc, $0) }, uniquingKeysWith: { first, _ in first })
        let targets = targets(statistics)
        let peers = statistics.peers.enumerated().map { index, peer -> StatusScreen.Peer in
            let stream = peer.ssrc.flatMap { streams[$0] }
            let listening = peer.listening.map { PeerListening(volumePercent: $0.volumePercent, muted: $0.muted) }
                ?? peer.ssrc.flatMap { volumes[$0] } ?? .asSent
            let heard = (stream?.received ?? 0) + (stream?.lost ?? 0)
            let state: StatusScreen.Peer.State = peer.talking || (stream?.level ?? 0) > 0.01
                ? .talking : peer.secondsSinceHeard != nil ? .connected : .found
            return StatusScreen.Peer(
                name: peer.name ?? peer.address, address: peer.fingerprint.map { "\(peer.address)  \($0)" } ?? peer.address, state: state, level: StatusScreen.meterLevel(amplitude: stream?.level ?? 0),
                lossPercent: heard > 0 ? Double(stream?.lost ?? 0) * 100 / Double(heard) : 0,
                jitterMilliseconds: stream?.jitterMs ?? peer.reportedJitterMilliseconds ?? 0,
                delayMilliseconds: stream?.currentDelayMs ?? 0,
                volumePercent: listening.volumePercent, muted: listening.muted, selected: index == min(selectedPeer, statistics.peers.count - 1),
                rooms: peer.rooms, to: peer.to, page: stream?.page ?? false
            )
        }
        let talkHelp = call.configuration.mode == .ptt ? "hold space: talk  " : ""
        let faults = TalkInterface.faults(in: statistics)
        return StatusScreen(
            name: call.configuration.name,
            address: "port \(call.localPort)" + (statistics.security.fingerprint.map { "  \($0)" } ?? "  UNENCRYPTED"),
            mode: call.configuration.mode, codec: "\(statistics.codecMode.description), \(statistics.bitrate / 1_000) kb/s",
            transmitting: call.isTransmitting, muted: muted, microphoneLevel: StatusScreen.meterLevel(amplitude: call.microphoneLevel), peers: peers,
            keyHelp: talkHelp + "1-9: talk to  m: mute  ↑↓: pick peer  +/-: its volume  x: mute it  q: quit",
            notice: faults.isEmpty ? (call.target != .all && statistics.toPeers == 0 ? "no device in \(TerminalText.sanitized(call.target.description)) is reachable: nothing is sent" : notice) : faults.joined(separator: "; "),
            target: TerminalText.sanitized(call.target.description), targets: targets.map { TerminalText.sanitized($0.description) }
        )
    }

    private func show(_ screen: StatusScreen) {
        if let terminal {
            let lines = screen.render(width: terminal.size.columns, colour: options.colour)
            if lines != lastDrawn {
                terminal.draw(lines)
                lastDrawn = lines
            }
        } else {
            // Not a terminal: a plain line whenever who is there or who talks changes.
            let peers = screen.peers.map { "\($0.name) \($0.state.rawValue) \($0.quality)" }.joined(separator: ", ")
            let line = "\(screen.transmitting ? "TX" : "rx") peers: \(peers.isEmpty ? "none" : peers)"
                + (screen.notice.map { "  (\($0))" } ?? "")
            if line != lastPlainLine {
                print(line)
                fflush(nil)
                lastPlainLine = line
            }
        }
    }
}
