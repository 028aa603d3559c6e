import ArgumentParser
import FoundationEssentials
import IntercomCall
import IntercomCore
import IntercomDSP
import IntercomIO

private typealias Setting = ConfigurationSchema

/// Where sound comes from and goes to, and how it is coded. A setting left out here is the
/// configuration file's, else the default the help names.
struct AudioOptions: ConfigurableOptions {
    @Option(name: .customLong("input-file"), help: ArgumentHelp("Read the microphone from this WAV file (any rate, any channels).", valueName: "F.wav"))
    var inputFile: String?

    @Option(name: .customLong("output-file"), help: ArgumentHelp("Write what is heard to this WAV file (48 kHz mono).", valueName: "F.wav"))
    var outputFile: String?

    @Option(name: Setting.capture.optionName, help: Setting.capture.argumentHelp)
    var givenCapture: String?

    @Option(name: Setting.playback.optionName, help: Setting.playback.argumentHelp)
    var givenPlayback: String?

    @Option(name: Setting.bufferMilliseconds.optionName, help: Setting.bufferMilliseconds.argumentHelp)
    var givenBufferMilliseconds: Int?

    @Flag(name: Setting.echoCancellation.optionName, inversion: .prefixedNo, help: Setting.echoCancellation.argumentHelp)
    var givenEchoCancellation: Bool?

    @Option(name: Setting.echoTailMilliseconds.optionName, help: Setting.echoTailMilliseconds.argumentHelp)
    var givenEchoTailMilliseconds: Int?

    @Flag(name: Setting.echoDistortion.optionName, inversion: .prefixedNo, help: Setting.echoDistortion.argumentHelp)
    var givenEchoDistortion: Bool?

    @Flag(name: Setting.denoise.optionName, inversion: .prefixedNo, help: Setting.denoise.argumentHelp)
    var givenDenoise: Bool?

    @Flag(name: Setting.automaticGainControl.optionName, inversion: .prefixedNo, help: Setting.automaticGainControl.argumentHelp)
    var givenAutomaticGainControl: Bool?

    @Option(name: Setting.profile.optionName, help: Setting.profile.argumentHelp)
    var givenProfile: AudioProfile?

    @Option(name: Setting.frameMilliseconds.optionName, help: Setting.frameMilliseconds.argumentHelp)
    var givenFrameMilliseconds: Int?

    @Option(name: Setting.bitrate.optionName, help: Setting.bitrate.argumentHelp)
    var givenBitrate: Int?

    @Flag(name: Setting.forwardErrorCorrection.optionName, inversion: .prefixedNo, help: Setting.forwardErrorCorrection.argumentHelp)
    var givenFEC: Bool?

    @Flag(name: Setting.discontinuousTransmission.optionName, inversion: .prefixedNo, help: Setting.discontinuousTransmission.argumentHelp)
    var givenDTX: Bool?

    var capture: String { givenCapture ?? Setting.capture.defaultValue() }
    var playback: String { givenPlayback ?? Setting.playback.defaultValue() }
    var audioBufferMilliseconds: Int { givenBufferMilliseconds ?? Setting.bufferMilliseconds.defaultValue() }
    var echoCancellation: Bool { givenEchoCancellation ?? Setting.echoCancellation.defaultValue() }
    var echoTailMilliseconds: Int { givenEchoTailMilliseconds ?? Setting.echoTailMilliseconds.defaultValue() }
    var echoDistortion: Bool { givenEchoDistortion ?? Setting.echoDistortion.defaultValue() }
    var denoise: Bool { givenDenoise ?? Setting.denoise.defaultValue() }
    var automaticGainControl: Bool { givenAutomaticGainControl ?? Setting.automaticGainControl.defaultValue() }
    var profile: AudioProfile { givenProfile ?? Setting.profile.defaultValue() }
    /// The robust encoder's frame when the codec adapts (and a file's frame).
    var frameMilliseconds: Int { givenFrameMilliseconds ?? profile.frameMilliseconds ?? OpusEncoderConfiguration().frameMilliseconds }
    /// A frame length given, or one the profile sets, fixes it; otherwise the codec adapts
    /// (`CodecModeController`).
    var adaptiveCodec: Bool { givenFrameMilliseconds == nil && profile.frameMilliseconds == nil }
    var bitrate: Int { givenBitrate ?? profile.bitrate ?? Setting.bitrate.defaultValue() }
    var forwardErrorCorrection: Bool { givenFEC ?? Setting.forwardErrorCorrection.defaultValue() }
    var discontinuousTransmission: Bool { givenDTX ?? Setting.discontinuousTransmission.defaultValue() }

    static var configurable: [ConfigurableSetting<Self>] {
        [
            .init(Setting.capture, \.givenCapture),
            .init(Setting.playback, \.givenPlayback),
            .init(Setting.bufferMilliseconds, \.givenBufferMilliseconds),
            .init(Setting.profile, \.givenProfile),
            // Not set: the codec adapts (no frame length is in use).
            .init(Setting.frameMilliseconds, \.givenFrameMilliseconds),
            .init(Setting.bitrate, \.givenBitrate),
            .init(Setting.forwardErrorCorrection, \.givenFEC),
            .init(Setting.discontinuousTransmission, \.givenDTX),
            .init(Setting.echoCancellation, \.givenEchoCancellation),
            .init(Setting.echoTailMilliseconds, \.givenEchoTailMilliseconds),
            .init(Setting.echoDistortion, \.givenEchoDistortion),
            .init(Setting.denoise, \.givenDenoise),
            .init(Setting.automaticGainControl, \.givenAutomaticGainControl),
        ]
    }

    /// Every value checked as soon as the options are parsed, before anything is opened.
    func validate() throws {
        try checkRanges()
        _ = try encoderConfiguration()
    }

    /// Applies the audio choices to a call's configuration.
    func apply(to configuration: inout CallConfiguration) throws {
        configuration.encoder = try encoderConfiguration()
        configuration.adaptiveCodec = adaptiveCodec
        configuration.liveInput = inputFile == nil
        configuration.echoCancellation = echoCancellation
        configuration.echoTailMilliseconds = echoTailMilliseconds
        configuration.echoCancelsDistortion = echoDistortion
        configuration.longestDevicePeriod = profile.longestDevicePeriod
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
    @Option(name: Setting.port.optionName, help: Setting.port.argumentHelp)
    var givenPort: Int?

    @Option(name: Setting.peers.optionName, help: Setting.peers.argumentHelp)
    var peer: [String] = []

    @Flag(name: Setting.discovery.optionName, inversion: .prefixedNo, help: Setting.discovery.argumentHelp)
    var givenDiscovery: Bool?

    @Option(name: Setting.name.optionName, help: Setting.name.argumentHelp)
    var name: String?

    @Option(name: Setting.bind.optionName, help: Setting.bind.argumentHelp)
    var bind: String?

    @Option(name: Setting.rooms.optionName, help: Setting.rooms.argumentHelp)
    var room: [String] = []

    @Flag(name: Setting.pages.optionName, inversion: .prefixedNo, help: Setting.pages.argumentHelp)
    var givenPages: Bool?

    @Option(name: Setting.pageDuckingDecibels.optionName, help: Setting.pageDuckingDecibels.argumentHelp)
    var givenPageDucking: Int?

    @Option(name: Setting.target.optionName, help: Setting.target.argumentHelp)
    var target: String?

    @Flag(help: "Speak plain RTP, for GStreamer, ffmpeg, VLC and other RTP tools. Anyone on the LAN can then listen and talk.")
    var unencrypted = false

    @Option(name: .customLong("rekey-seconds"), help: .hidden)
    var rekeySeconds: Double = 120

    var port: Int { givenPort ?? Setting.port.defaultValue() }
    var discovery: Bool { givenDiscovery ?? Setting.discovery.defaultValue() }
    var nameOrDefault: String { name ?? defaultPeerName() }
    var pages: Bool { givenPages ?? Setting.pages.defaultValue() }
    var pageDucking: Int { givenPageDucking ?? Setting.pageDuckingDecibels.defaultValue() }

    static var configurable: [ConfigurableSetting<Self>] {
        [
            .init(Setting.port, \.givenPort),
            .init(Setting.bind, \.bind),
            .init(Setting.peers, list: \.peer),
            .init(Setting.discovery, \.givenDiscovery),
            .init(Setting.name, \.name, shown: \.nameOrDefault),
            .init(Setting.rooms, list: \.room),
            .init(Setting.target, \.target),
            .init(Setting.pages, \.givenPages),
            .init(Setting.pageDuckingDecibels, \.givenPageDucking),
        ]
    }
}

extension NetworkOptions {
    /// Every value checked as soon as the options are parsed, before anything is opened.
    func validate() throws {
        try checkRanges()
        _ = try peerAddresses()
        _ = try bindAddress()
        _ = try rooms()
        _ = try callTarget()
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
    @Option(name: Setting.mode.optionName, help: Setting.mode.argumentHelp)
    var mode: TalkMode?

    @Option(name: Setting.pttDevice.optionName, help: Setting.pttDevice.argumentHelp)
    var pttDevice: String?

    @Option(name: Setting.pttKeys.optionName, help: Setting.pttKeys.argumentHelp)
    var givenPTTKeys: [String] = []

    @Option(name: Setting.pttMaxSeconds.optionName, help: Setting.pttMaxSeconds.argumentHelp)
    var givenPTTMaxSeconds: Double?

    @Flag(name: Setting.pttLatch.optionName, inversion: .prefixedNo, help: Setting.pttLatch.argumentHelp)
    var givenPTTLatch: Bool?

    @Option(name: Setting.pttGPIO.optionName, help: Setting.pttGPIO.argumentHelp)
    var pttGPIO: [String] = []

    @Flag(name: Setting.gpioActiveHigh.optionName, inversion: .prefixedNo, help: Setting.gpioActiveHigh.argumentHelp)
    var givenGPIOActiveHigh: Bool?

    @Option(name: Setting.transmitLampGPIO.optionName, help: Setting.transmitLampGPIO.argumentHelp)
    var transmitLampGPIO: String?

    @Option(name: Setting.receiveLampGPIO.optionName, help: Setting.receiveLampGPIO.argumentHelp)
    var receiveLampGPIO: String?

    @Flag(name: Setting.tones.optionName, inversion: .prefixedNo, help: Setting.tones.argumentHelp)
    var givenTones: Bool?

    @Option(name: Setting.pttHoldMilliseconds.optionName, help: Setting.pttHoldMilliseconds.argumentHelp)
    var givenPTTHoldMilliseconds: Int?

    @Option(name: Setting.voxThreshold.optionName, help: Setting.voxThreshold.argumentHelp)
    var givenVoxThreshold: Int?

    var pttKeys: [String] { givenPTTKeys.isEmpty ? Setting.pttKeys.defaultValue() : givenPTTKeys }
    var pttMaxSeconds: Double { givenPTTMaxSeconds ?? Setting.pttMaxSeconds.defaultValue() }
    var pttLatch: Bool { givenPTTLatch ?? Setting.pttLatch.defaultValue() }
    var gpioActiveHigh: Bool { givenGPIOActiveHigh ?? Setting.gpioActiveHigh.defaultValue() }
    var tones: Bool { givenTones ?? Setting.tones.defaultValue() }
    var pttHoldMilliseconds: Int { givenPTTHoldMilliseconds ?? Setting.pttHoldMilliseconds.defaultValue() }
    var voxThreshold: Int { givenVoxThreshold ?? Setting.voxThreshold.defaultValue() }

    static var configurable: [ConfigurableSetting<Self>] {
        [
            .init(Setting.mode, \.mode),
            .init(Setting.voxThreshold, \.givenVoxThreshold),
            .init(Setting.pttDevice, \.pttDevice),
            .init(Setting.pttKeys, list: \.givenPTTKeys),
            .init(Setting.pttMaxSeconds, \.givenPTTMaxSeconds),
            .init(Setting.pttLatch, \.givenPTTLatch),
            .init(Setting.pttHoldMilliseconds, \.givenPTTHoldMilliseconds),
            .init(Setting.tones, \.givenTones),
            .init(Setting.pttGPIO, list: \.pttGPIO),
            .init(Setting.gpioActiveHigh, \.givenGPIOActiveHigh),
            .init(Setting.transmitLampGPIO, \.transmitLampGPIO),
            .init(Setting.receiveLampGPIO, \.receiveLampGPIO),
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
        try checkRanges()
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
extension AudioProfile: ExpressibleByArgument {}

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
