import ArgumentParser
import FoundationEssentials
import IntercomCall
import IntercomCore
import IntercomDSP
import IntercomIO

/// Where sound comes from and goes to, and how it is coded. A setting left out here is the
/// configuration file's, else the default the help names.
struct AudioOptions: ConfigurableOptions {
    @Option(name: .customLong("input-file"), help: ArgumentHelp("Read the microphone from this WAV file (any rate, any channels).", valueName: "F.wav"))
    var inputFile: String?

    @Option(name: .customLong("output-file"), help: ArgumentHelp("Write what is heard to this WAV file (48 kHz mono).", valueName: "F.wav"))
    var outputFile: String?

    @Option(name: .customLong("capture"), help: ArgumentHelp("ALSA device to capture from (default: default).", valueName: "DEVICE"))
    var givenCapture: String?

    @Option(name: .customLong("playback"), help: ArgumentHelp("ALSA device to play to (default: default).", valueName: "DEVICE"))
    var givenPlayback: String?

    @Option(name: .customLong("audio-buffer-ms"), help: ArgumentHelp("Sound card buffer (default: 20): the speaker's is kept full, so all of it is delay; raise it if underruns are counted (intercom status).", valueName: "MS"))
    var givenBufferMilliseconds: Int?

    @Flag(name: .customLong("aec"), inversion: .prefixedNo, help: "Cancel the speaker's echo in the microphone (default: on).")
    var givenEchoCancellation: Bool?

    @Option(name: .customLong("echo-tail-ms"), help: ArgumentHelp("The longest echo path to cancel (default: 150).", valueName: "MS"))
    var givenEchoTailMilliseconds: Int?

    @Flag(name: .customLong("denoise"), inversion: .prefixedNo, help: "Suppress background noise (default: on).")
    var givenDenoise: Bool?

    @Flag(name: .customLong("agc"), inversion: .prefixedNo, help: "Adjust the microphone level automatically (default: on).")
    var givenAutomaticGainControl: Bool?

    @Option(name: .customLong("frame-ms"), help: ArgumentHelp("A fixed Opus frame length: 5, 10 or 20 (default: adaptive, 5 ms of low-delay CELT while someone speaks on a clean link, 10 ms with FEC otherwise; 10 from a file).", valueName: "MS"))
    var givenFrameMilliseconds: Int?

    @Option(name: .customLong("bitrate"), help: ArgumentHelp("Opus bitrate in bits per second (default: \(OpusEncoderConfiguration().bitrate)).", valueName: "BPS"))
    var givenBitrate: Int?

    @Flag(name: .customLong("fec"), inversion: .prefixedNo, help: "Send in-band forward error correction (default: on).")
    var givenFEC: Bool?

    @Flag(name: .customLong("dtx"), inversion: .prefixedNo, help: "Discontinuous transmission: send almost nothing in silence (default: on).")
    var givenDTX: Bool?

    var capture: String { givenCapture ?? "default" }
    var playback: String { givenPlayback ?? "default" }
    var audioBufferMilliseconds: Int { givenBufferMilliseconds ?? 20 }
    var echoCancellation: Bool { givenEchoCancellation ?? true }
    var echoTailMilliseconds: Int { givenEchoTailMilliseconds ?? 150 }
    var denoise: Bool { givenDenoise ?? true }
    var automaticGainControl: Bool { givenAutomaticGainControl ?? true }
    var frameMilliseconds: Int { givenFrameMilliseconds ?? 10 }
    /// A frame length given fixes it; otherwise the codec adapts (`CodecModeController`).
    var adaptiveCodec: Bool { givenFrameMilliseconds == nil }
    var bitrate: Int { givenBitrate ?? OpusEncoderConfiguration().bitrate }
    var forwardErrorCorrection: Bool { givenFEC ?? true }
    var discontinuousTransmission: Bool { givenDTX ?? OpusEncoderConfiguration().discontinuousTransmission }

    static var configurable: [ConfigurableSetting<Self>] {
        [
            .init("audio.capture", \.givenCapture, shown: \.capture),
            .init("audio.playback", \.givenPlayback, shown: \.playback),
            .init("audio.buffer-ms", \.givenBufferMilliseconds, shown: \.audioBufferMilliseconds),
            // Not set: the codec adapts (no frame length is in use).
            .init("audio.frame-ms", \.givenFrameMilliseconds),
            .init("audio.bitrate", \.givenBitrate, shown: \.bitrate),
            .init("audio.fec", \.givenFEC, shown: \.forwardErrorCorrection),
            .init("audio.dtx", \.givenDTX, shown: \.discontinuousTransmission),
            .init("audio.aec", \.givenEchoCancellation, shown: \.echoCancellation),
            .init("audio.echo-tail-ms", \.givenEchoTailMilliseconds, shown: \.echoTailMilliseconds),
            .init("audio.denoise", \.givenDenoise, shown: \.denoise),
            .init("audio.agc", \.givenAutomaticGainControl, shown: \.automaticGainControl),
        ]
    }

    /// Every value checked as soon as the options are parsed, before anything is opened.
    func validate() throws {
        guard (10...2000).contains(echoTailMilliseconds) else {
            throw ValidationError("--echo-tail-ms \(echoTailMilliseconds) is outside 10...2000")
        }
        guard (10...1000).contains(audioBufferMilliseconds) else {
            throw ValidationError("--audio-buffer-ms \(audioBufferMilliseconds) is outside 10...1000")
        }
        _ = try encoderConfiguration()
    }

    /// Applies the audio choices to a call's configuration.
    func apply(to configuration: inout CallConfiguration) throws {
        configuration.encoder = try encoderConfiguration()
        configuration.adaptiveCodec = adaptiveCodec
        configuration.liveInput = inputFile == nil
        configuration.echoCancellation = echoCancellation
        configuration.echoTailMilliseconds = echoTailMilliseconds
        configuration.preprocessor.denoise = denoise
        configuration.preprocessor.automaticGainControl = automaticGainControl
    }

    func encoderConfiguration() throws -> OpusEncoderConfiguration {
        var configuration = OpusEncoderConfiguration()
        configuration.frameMilliseconds = frameMilliseconds
        configuration.bitrate = bitrate
        configuration.forwardErrorCorrection = forwardErrorCorrection
        configuration.discontinuousTransmission = discontinuousTransmission
        do {
            try configuration.validate()
        } catch {
            throw ValidationError("\(error)")
        }
        return configuration
    }
}

/// How this peer is reached and whom it calls; a setting left out is the configuration file's.
struct NetworkOptions: ConfigurableOptions {
    @Option(name: .customLong("port"), help: "UDP port to listen on (default: 5004).")
    var givenPort: Int?

    @Option(help: ArgumentHelp("A peer to call, without discovery (repeatable; replaces the configuration file's peers).", valueName: "HOST:PORT"))
    var peer: [String] = []

    @Flag(name: .customLong("discovery"), inversion: .prefixedNo, help: "Publish and browse mDNS (default: on); without it, call only --peer peers.")
    var givenDiscovery: Bool?

    @Option(help: ArgumentHelp("The name other peers see (default: the host's name).", valueName: "NAME"))
    var name: String?

    @Option(help: ArgumentHelp("Listen for the call on this local address only (mDNS then announces that interface alone).", valueName: "ADDRESS"))
    var bind: String?

    @Option(help: ArgumentHelp("A room this device belongs to (repeatable, at most 16; replaces the configuration file's rooms): 'room:NAME' targets reach it. Its paired devices are told inside the encrypted call.", valueName: "NAME"))
    var room: [String] = []

    @Flag(name: .customLong("pages"), inversion: .prefixedNo, help: "Play pages ('intercom page': a chime or a message, over everything else, even from a device muted here; default: on).")
    var givenPages: Bool?

    @Option(name: .customLong("page-ducking-db"), help: ArgumentHelp("How much quieter the other devices play while a page plays (default: 15).", valueName: "DB"))
    var givenPageDucking: Int?

    @Option(name: .customLong("to"), help: ArgumentHelp("Whom this device talks to: 'all' (the default), 'room:NAME' (the devices in that room), or one device by its name or fingerprint (a whisper: the others get none of it).", valueName: "TARGET"))
    var target: String?

    @Flag(help: "Speak plain RTP, for GStreamer, ffmpeg, VLC and other RTP tools. Anyone on the LAN can then listen and talk.")
    var unencrypted = false

    @Option(name: .customLong("rekey-seconds"), help: .hidden)
    var rekeySeconds: Double = 120

    var port: Int { givenPort ?? 5004 }
    var discovery: Bool { givenDiscovery ?? true }
    var nameOrDefault: String { name ?? defaultPeerName() }
    var targetOrDefault: String { target ?? CallTarget.all.description }
    var pages: Bool { givenPages ?? true }
    var pageDucking: Int { givenPageDucking ?? 15 }

    static var configurable: [ConfigurableSetting<Self>] {
        [
            .init("network.port", \.givenPort, shown: \.port),
            .init("network.bind", \.bind),
            .init("network.peers", list: \.peer),
            .init("network.discovery", \.givenDiscovery, shown: \.discovery),
            .init("network.name", \.name, shown: \.nameOrDefault),
            .init("call.rooms", list: \.room),
            .init("call.to", \.target, shown: \.targetOrDefault),
            .init("call.pages", \.givenPages, shown: \.pages),
            .init("call.page-ducking-db", \.givenPageDucking, shown: \.pageDucking),
        ]
    }
}

extension NetworkOptions {
    /// Every value checked as soon as the options are parsed, before anything is opened.
    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is not from 0 to 65535") }
        _ = try peerAddresses()
        _ = try bindAddress()
        _ = try rooms()
        _ = try callTarget()
        guard (0...40).contains(pageDucking) else { throw ValidationError("--page-ducking-db \(pageDucking) is not from 0 to 40") }
        guard rekeySeconds >= 1 else { throw ValidationError("--rekey-seconds must be at least 1") }
    }

    /// The `--room` names, each once.
    func rooms() throws -> [GroupName] {
        var rooms: [GroupName] = []
        for text in room {
            guard let name = GroupName(text) else {
                throw ValidationError("--room '\(TerminalText.sanitized(text.prefix(40)))': a room's name is 1 to \(GroupName.maximumCharacters) printable characters")
            }
            if !rooms.contains(name) { rooms.append(name) }
        }
        guard rooms.count <= GroupName.maximumRooms else { throw ValidationError("\(CallTargetError.tooManyRooms(rooms.count))") }
        return rooms
    }

    /// `--to`.
    func callTarget() throws -> CallTarget {
        do {
            return try target.map { try CallTarget(parsing: $0) } ?? .all
        } catch {
            throw ValidationError("--to: \(error)")
        }
    }

    /// The `--peer` addresses.
    func peerAddresses() throws -> [SocketAddress] {
        try peer.map { text in
            do {
                return try SocketAddress.parse(text, label: "--peer")
            } catch {
                throw ValidationError("\(error)")
            }
        }
    }

    /// `--bind`'s address (the call's port is set apart).
    func bindAddress() throws -> SocketAddress? {
        guard let bind else { return nil }
        let text = bind.contains(":") && !bind.hasPrefix("[") ? "[\(bind)]:1" : "\(bind):1"
        // Whether it is one of ours, binding says (the whole of 127/8 is, without being listed).
        do {
            return try SocketAddress.parse(text, label: "--bind")
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

/// Where this device keeps its identity and the devices it paired with.
struct IdentityOptions: ParsableArguments {
    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp(
            "Where this device keeps its identity and paired devices (default: $STATE_DIRECTORY, else $XDG_STATE_HOME/intercom, else ~/.local/state/intercom).",
            valueName: "DIR"))
    var stateDirectory: String?

    func directory() throws -> StateDirectory {
        try StateDirectory.resolve(explicit: stateDirectory, environment: ProcessInfo.processInfo.environment)
    }

    func identity() throws -> DeviceIdentity {
        try refusingUnsafeState { try DeviceIdentity.loadOrCreate(in: directory()) }
    }

    /// The trusted list, read once here so that one that is not safely ours stops the command
    /// at once (a call that met it later would trust nobody, silently).
    func trustedDevices() throws -> TrustedDeviceStore {
        let store = TrustedDeviceStore(directory: try directory())
        _ = try refusingUnsafeState { try store.load() }
        return store
    }

    /// State that is there but not safely ours (a directory another user owns or may write, a
    /// key file open to others) is a configuration fault (78) that names the path: it needs
    /// the owner's attention, and a restart will not fix it.
    private func refusingUnsafeState<T>(_ step: () throws -> T) throws -> T {
        do {
            return try step()
        } catch let error as StateDirectoryError where error.isUnsafe {
            throw Failure(.configuration, error)
        } catch let error as PrivateFileError {
            if case .unsafe = error { throw Failure(.configuration, error) }
            throw error
        }
    }

    /// The identity and trusted list an encrypted call uses.
    func callSecurity(rekeySeconds: Double = 120) throws -> CallSecurity {
        var security = CallSecurity(identity: try identity(), trustedDevices: try trustedDevices())
        security.rekeyInterval = .seconds(rekeySeconds)
        return security
    }
}

/// When this peer transmits; a setting left out is the configuration file's.
struct TalkOptions: ConfigurableOptions {
    @Option(help: "When to transmit: ptt (while the talk key is held), vox (on speech) or open (always). Default: ptt at a terminal or with --ptt-device, open otherwise (files, scripts).")
    var mode: TalkMode?

    @Option(name: .customLong("ptt-device"), help: ArgumentHelp("Talk button from this evdev device (a foot switch, a spare keyboard).", valueName: "/dev/input/eventN"))
    var pttDevice: String?

    @Option(name: .customLong("ptt-key"), help: ArgumentHelp("A --ptt-device key that talks, by name (space, the default, KEY_F13, BTN_0) or code; repeatable, each with the target it talks to while held: KEY_F13=room:kitchen.", valueName: "NAME[=TARGET]"))
    var givenPTTKeys: [String] = []

    @Option(name: .customLong("ptt-max-seconds"), help: ArgumentHelp("The longest a held (or stuck) talk key transmits (default: 120).", valueName: "SECONDS"))
    var givenPTTMaxSeconds: Double?

    @Flag(name: .customLong("ptt-latch"), inversion: .prefixedNo, help: "Tap the talk key to start talking, tap again to stop (default: off).")
    var givenPTTLatch: Bool?

    @Option(name: .customLong("ptt-gpio"), help: ArgumentHelp("A talk button on a GPIO line (debounced), e.g. gpiochip0:17; repeatable, each with the target it talks to while held: gpiochip0:17=room:kitchen.", valueName: "CHIP:LINE[=TARGET]"))
    var pttGPIO: [String] = []

    @Flag(name: .customLong("gpio-active-high"), inversion: .prefixedNo, help: "The GPIO button drives its line high when pressed (default: off, it shorts it to ground).")
    var givenGPIOActiveHigh: Bool?

    @Option(name: .customLong("tx-lamp-gpio"), help: ArgumentHelp("A GPIO line lit while transmitting.", valueName: "CHIP:LINE"))
    var transmitLampGPIO: String?

    @Option(name: .customLong("rx-lamp-gpio"), help: ArgumentHelp("A GPIO line lit while a peer talks.", valueName: "CHIP:LINE"))
    var receiveLampGPIO: String?

    @Flag(name: .customLong("tones"), inversion: .prefixedNo, help: "Short tones at both ends when a transmission starts and ends, like a two-way radio (default: off).")
    var givenTones: Bool?

    @Option(name: .customLong("ptt-hold-ms"), help: ArgumentHelp("Without key-release events: how long after a press the key counts as held until it repeats (covers the keyboard's initial repeat delay; default: 650).", valueName: "MS"))
    var givenPTTHoldMilliseconds: Int?

    @Option(name: .customLong("vox-threshold"), help: ArgumentHelp("Speech probability (percent) that opens the VOX gate (default: 80).", valueName: "PERCENT"))
    var givenVoxThreshold: Int?

    var pttKeys: [String] { givenPTTKeys.isEmpty ? ["space"] : givenPTTKeys }
    var pttMaxSeconds: Double { givenPTTMaxSeconds ?? 120 }
    var pttLatch: Bool { givenPTTLatch ?? false }
    var gpioActiveHigh: Bool { givenGPIOActiveHigh ?? false }
    var tones: Bool { givenTones ?? false }
    var pttHoldMilliseconds: Int { givenPTTHoldMilliseconds ?? 650 }
    var voxThreshold: Int { givenVoxThreshold ?? 80 }

    static var configurable: [ConfigurableSetting<Self>] {
        [
            .init("talk.mode", \.mode),
            .init("talk.vox-threshold", \.givenVoxThreshold, shown: \.voxThreshold),
            .init("talk.ptt-device", \.pttDevice),
            .init("talk.ptt-key", list: \.givenPTTKeys, shown: \.pttKeys),
            .init("talk.ptt-max-seconds", \.givenPTTMaxSeconds, shown: \.pttMaxSeconds),
            .init("talk.ptt-latch", \.givenPTTLatch, shown: \.pttLatch),
            .init("talk.ptt-hold-ms", \.givenPTTHoldMilliseconds, shown: \.pttHoldMilliseconds),
            .init("talk.tones", \.givenTones, shown: \.tones),
            .init("talk.ptt-gpio", list: \.pttGPIO),
            .init("talk.gpio-active-high", \.givenGPIOActiveHigh, shown: \.gpioActiveHigh),
            .init("talk.tx-lamp-gpio", \.transmitLampGPIO),
            .init("talk.rx-lamp-gpio", \.receiveLampGPIO),
        ]
    }

    /// The mode in force: the one asked for, else push-to-talk where there is a key to hold;
    /// headless with no button, voice activation; otherwise (files, scripts) always open.
    func effectiveMode(interactive: Bool, fileInput: Bool, headless: Bool = false) -> TalkMode {
        if let mode { return mode }
        if pttDevice != nil || !pttGPIO.isEmpty || (interactive && !fileInput) { return .ptt }
        return headless && !fileInput ? .vox : .open
    }

    /// Every value checked as soon as the options are parsed, before anything is opened.
    func validate() throws {
        guard (1...99).contains(voxThreshold) else { throw ValidationError("--vox-threshold \(voxThreshold) is outside 1...99") }
        guard pttMaxSeconds > 0 else { throw ValidationError("--ptt-max-seconds must be positive") }
        guard (100...2000).contains(pttHoldMilliseconds) else { throw ValidationError("--ptt-hold-ms \(pttHoldMilliseconds) is outside 100...2000") }
        for key in pttKeys {
            let (name, _) = try Self.control(key, option: "--ptt-key")
            guard EvdevKeyEvents.keyCode(named: name) != nil else { throw ValidationError("--ptt-key '\(name)' is not a key name or code") }
        }
        for button in pttGPIO {
            let (address, _) = try Self.control(button, option: "--ptt-gpio")
            guard GPIOLineAddress(address) != nil else { throw ValidationError("--ptt-gpio '\(address)' is not CHIP:LINE, e.g. gpiochip0:17") }
        }
        for (text, option) in [(transmitLampGPIO, "--tx-lamp-gpio"), (receiveLampGPIO, "--rx-lamp-gpio")] {
            guard let text else { continue }
            guard GPIOLineAddress(text) != nil else { throw ValidationError("\(option) '\(text)' is not CHIP:LINE, e.g. gpiochip0:17") }
        }
    }

    func apply(to configuration: inout CallConfiguration, interactive: Bool, fileInput: Bool, headless: Bool = false) throws {
        configuration.mode = effectiveMode(interactive: interactive, fileInput: fileInput, headless: headless)
        configuration.talkTones = tones
        configuration.preprocessor.vadStartProbability = voxThreshold
        configuration.preprocessor.vadContinueProbability = max(1, voxThreshold - 15)
    }
}

/// How long to run and what to report.
struct RunOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Leave the call cleanly after this many seconds.", valueName: "SECONDS"))
    var duration: Double?

    @Option(name: .customLong("stats-json"), help: ArgumentHelp("At exit, write the call's statistics to this JSON file.", valueName: "F"))
    var statsJSON: String?

    @Flag(name: .shortAndLong, help: "Log more (debugging).")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Log only warnings and errors.")
    var quiet = false

    /// The watchdog's test: THREAD@SECONDS stops that real-time thread's loop after SECONDS.
    @Option(name: .customLong("stall-thread-for-testing"), help: .hidden)
    var stallForTesting: String?

    /// `--stall-thread-for-testing`, read.
    func stall() throws -> (thread: String, after: Duration)? {
        guard let stallForTesting else { return nil }
        let parts = stallForTesting.split(separator: "@")
        guard parts.count == 2, ["capture", "playback", "network"].contains(String(parts[0])), let seconds = Double(parts[1]), seconds >= 0 else {
            throw ValidationError("--stall-thread-for-testing takes capture, playback or network, '@', and seconds")
        }
        return (String(parts[0]), .seconds(seconds))
    }

    func validate() throws {
        guard !(verbose && quiet) else { throw ValidationError("--verbose and --quiet contradict each other") }
        _ = try stall()
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
    }
}

extension TalkMode: ExpressibleByArgument {}

extension TalkOptions {
    /// The interface's settings for the push-to-talk choices.
    func interfaceOptions() -> TalkInterface.Options {
        var options = TalkInterface.Options()
        options.maximumTransmit = .seconds(pttMaxSeconds)
        options.keyHold = .milliseconds(pttHoldMilliseconds)
        options.latch = pttLatch
        return options
    }

    /// A talk control's text, `NAME` or `NAME=TARGET`, read.
    static func control(_ text: String, option: String) throws -> (name: String, target: CallTarget?) {
        guard let equals = text.firstIndex(of: "=") else { return (text, nil) }
        do {
            return (String(text[..<equals]), try CallTarget(parsing: String(text[text.index(after: equals)...])))
        } catch {
            throw ValidationError("\(option) '\(TerminalText.sanitized(text.prefix(60)))': \(error)")
        }
    }

    /// The targets the talk buttons and keys name, with their option.
    func buttonTargets() throws -> [(option: String, target: CallTarget)] {
        let keys = pttDevice == nil ? [] : pttKeys.map { ("--ptt-key", $0) }
        return try (pttGPIO.map { ("--ptt-gpio", $0) } + keys).compactMap { option, text in
            try Self.control(text, option: option).target.map { (option, $0) }
        }
    }

    /// The GPIO buttons and lamps asked for, opened.
    func gpioControls() throws -> TalkInterface.GPIOControls {
        func line(_ text: String?, _ option: String, _ direction: ChipGPIOLine.Direction) throws -> GPIOLine? {
            guard let text, let address = GPIOLineAddress(text) else { return nil }
            do {
                return try ChipGPIOLine(address, direction: direction)
            } catch {
                throw Failure(.unavailable, message: "\(option): \(error)")
            }
        }
        let buttons = try pttGPIO.map { text -> (line: GPIOLine, target: CallTarget?) in
            let (address, target) = try Self.control(text, option: "--ptt-gpio")
            guard let opened = try line(address, "--ptt-gpio", .input(activeLow: !gpioActiveHigh)) else {
                throw ValidationError("--ptt-gpio '\(address)' is not CHIP:LINE, e.g. gpiochip0:17")
            }
            return (opened, target)
        }
        return TalkInterface.GPIOControls(
            talkButtons: buttons,
            transmitLamp: try line(transmitLampGPIO, "--tx-lamp-gpio", .output),
            receiveLamp: try line(receiveLampGPIO, "--rx-lamp-gpio", .output)
        )
    }

    /// The evdev talk keys, their device opened, if one was asked for.
    func button() throws -> TalkInterface.EvdevControls? {
        guard let pttDevice else { return nil }
        let keys = try pttKeys.compactMap { text -> (code: UInt16, target: CallTarget?)? in
            let (name, target) = try Self.control(text, option: "--ptt-key")
            return EvdevKeyEvents.keyCode(named: name).map { ($0, target) }
        }
        do {
            return TalkInterface.EvdevControls(device: try EvdevDevice(path: pttDevice), keys: keys)
        } catch {
            throw Failure(.unavailable, message: "--ptt-device \(error)")
        }
    }
}
