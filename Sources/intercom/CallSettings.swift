import ArgumentParser
import FoundationEssentials
import Glibc
import IntercomCall
import IntercomCore
import IntercomIO
import IntercomSecurity
import Logging

/// `--config FILE`: the configuration file whose settings stand under the command line's.
struct ConfigurationOptions: ParsableArguments {
    @Option(
        name: .customLong("config"),
        help: ArgumentHelp("Read settings from this file instead of \(ConfigurationFile.defaultPath); the command line's own win.", valueName: "FILE"))
    var path: String?

    /// The file asked for, which must be there, or the default one, which may be missing.
    func load() throws -> ConfigurationFile {
        let path = path ?? ConfigurationFile.defaultPath
        if self.path != nil || access(path, F_OK) == 0, access(path, R_OK) != 0 {
            throw Failure(.noInput, message: "\(path): \(String(cString: strerror(errno)))")
        }
        return try failing(as: .configuration) { try ConfigurationFile.load(path: path) }
    }
}

/// An option group whose settings the configuration file may give too: each is an optional
/// property (or a list), nil (empty) where the command line left it out, whose option takes
/// its name, help, range and default from its `ConfigurationSchema` setting.
protocol ConfigurableOptions: ParsableArguments {
    /// Each setting of the group, bound to its property.
    static var configurable: [ConfigurableSetting<Self>] { get }
}

/// One setting of an option group, bound to the property that holds it.
struct ConfigurableSetting<Options> {
    let setting: ConfigurationSchema.Setting
    let isGiven: (Options) -> Bool
    /// Takes the file's value where the command line gave none.
    let fill: (inout Options, ConfigurationText.Value) -> Void
    /// The value as given, for the ranges' check; nil where it is not given.
    let given: (Options) -> ConfigurationText.Value?
    /// The value a call uses, as `intercom config` writes it; nil where none is set.
    let shown: (Options) -> ConfigurationText.Value?

    /// A setting whose value in use is the one given, else the setting's default.
    init<Value: ConfigurationValueConvertible>(_ setting: ConfigurationSchema.Setting, _ property: WritableKeyPath<Options, Value?>) {
        self.init(setting, property, showing: { $0[keyPath: property]?.configurationValue ?? setting.defaultValue })
    }

    /// A setting whose value in use, `shown`, is worked out from other settings or the machine.
    init<Value: ConfigurationValueConvertible, Shown: ConfigurationValueConvertible>(
        _ setting: ConfigurationSchema.Setting, _ property: WritableKeyPath<Options, Value?>, shown: KeyPath<Options, Shown>
    ) {
        self.init(setting, property, showing: { $0[keyPath: shown].configurationValue })
    }

    private init<Value: ConfigurationValueConvertible>(
        _ setting: ConfigurationSchema.Setting, _ property: WritableKeyPath<Options, Value?>, showing: @escaping (Options) -> ConfigurationText.Value?
    ) {
        self.setting = setting
        isGiven = { $0[keyPath: property] != nil }
        fill = { options, value in options[keyPath: property] = options[keyPath: property] ?? Value(configurationValue: value) }
        given = { $0[keyPath: property]?.configurationValue }
        shown = showing
    }

    /// A repeatable option: the command line's list replaces the file's.
    init(_ setting: ConfigurationSchema.Setting, list property: WritableKeyPath<Options, [String]>) {
        self.setting = setting
        isGiven = { !$0[keyPath: property].isEmpty }
        fill = { options, value in
            if options[keyPath: property].isEmpty { options[keyPath: property] = [String](configurationValue: value) ?? [] }
        }
        given = { $0[keyPath: property].isEmpty ? nil : $0[keyPath: property].configurationValue }
        shown = { $0[keyPath: property].isEmpty ? setting.defaultValue ?? .array([]) : $0[keyPath: property].configurationValue }
    }
}

/// A value as a configuration file writes it, and read back from one.
protocol ConfigurationValueConvertible {
    var configurationValue: ConfigurationText.Value { get }
    /// The value of a file's entry (already checked against its setting); nil for another kind.
    init?(configurationValue: ConfigurationText.Value)
}

extension String: ConfigurationValueConvertible {
    var configurationValue: ConfigurationText.Value { .string(self) }
    init?(configurationValue value: ConfigurationText.Value) {
        guard case .string(let text) = value else { return nil }
        self = text
    }
}

extension Int: ConfigurationValueConvertible {
    var configurationValue: ConfigurationText.Value { .integer(self) }
    /// A choice of numbers may be written as a string (`frame-ms = "10"`).
    init?(configurationValue value: ConfigurationText.Value) {
        switch value {
        case .integer(let number): self = number
        case .string(let text): guard let number = Int(text) else { return nil }; self = number
        default: return nil
        }
    }
}

extension Double: ConfigurationValueConvertible {
    var configurationValue: ConfigurationText.Value { .float(self) }
    init?(configurationValue value: ConfigurationText.Value) {
        switch value {
        case .integer(let number): self = Double(number)
        case .float(let number): self = number
        default: return nil
        }
    }
}

extension Bool: ConfigurationValueConvertible {
    var configurationValue: ConfigurationText.Value { .boolean(self) }
    init?(configurationValue value: ConfigurationText.Value) {
        guard case .boolean(let flag) = value else { return nil }
        self = flag
    }
}

/// A choice of names (`mode = "vox"`) is written as its string.
extension ConfigurationValueConvertible where Self: RawRepresentable, RawValue == String {
    var configurationValue: ConfigurationText.Value { .string(rawValue) }
    init?(configurationValue value: ConfigurationText.Value) {
        guard case .string(let text) = value else { return nil }
        self.init(rawValue: text)
    }
}

extension TalkMode: ConfigurationValueConvertible {}
extension AudioProfile: ConfigurationValueConvertible {}

extension Array: ConfigurationValueConvertible where Element == String {
    var configurationValue: ConfigurationText.Value { .array(map { .string($0) }) }
    /// A list of one may be written as its one string.
    init?(configurationValue value: ConfigurationText.Value) {
        switch value {
        case .string(let text): self = [text]
        case .array(let items): self = items.compactMap { String(configurationValue: $0) }
        default: return nil
        }
    }
}

extension ConfigurationSchema.Setting {
    /// The option's name on the command line.
    var optionName: NameSpecification { .customLong(option) }
    /// The option's help, its default said last.
    var argumentHelp: ArgumentHelp { ArgumentHelp(helpWithDefault, valueName: valueName) }

    /// The default, for a setting that has one.
    func defaultValue<Value: ConfigurationValueConvertible>(_ type: Value.Type = Value.self) -> Value {
        guard let value = defaultValue.flatMap(Value.init(configurationValue:)) else {
            preconditionFailure("\(path) has no default of type \(Value.self)")
        }
        return value
    }
}

extension ConfigurableOptions {
    /// These options with every setting left out taken from `file`.
    func filled(from file: ConfigurationFile) -> Self {
        var options = self
        for binding in Self.configurable {
            if let value = file.value(of: binding.setting) { binding.fill(&options, value) }
        }
        return options
    }

    /// Every value given (on the command line or in the file) is one its setting takes: the
    /// same ranges and choices wherever it came from.
    func checkRanges() throws {
        for binding in Self.configurable {
            guard let value = binding.given(self), !binding.setting.accepts(value) else { continue }
            throw ValidationError("--\(binding.setting.option) \(ConfigurationText.literal(value)): \(binding.setting.expectation)")
        }
    }

    /// Whether the setting at `path` was given; nil if it is not one of this group's.
    func isGiven(_ path: String) -> Bool? {
        Self.configurable.first { $0.setting.path == path }.map { $0.isGiven(self) }
    }

    /// The setting at `path` as `intercom config` writes it; nil where it is not set or not one of this group's.
    func shownValue(_ path: String) -> ConfigurationText.Value? {
        Self.configurable.first { $0.setting.path == path }.flatMap { $0.shown(self) }
    }
}

/// The settings the configuration file may give, and `--config`: what `intercom config`
/// takes, and the file's own settings when it is read.
struct SettingsOptions: ParsableArguments {
    @OptionGroup(title: "Audio") var audio: AudioOptions
    @OptionGroup(title: "Network") var network: NetworkOptions
    @OptionGroup(title: "Talk") var talk: TalkOptions
    @OptionGroup(title: "Configuration") var configuration: ConfigurationOptions

    /// Whether the command line gave the setting at `path`.
    func isGiven(_ path: String) -> Bool {
        audio.isGiven(path) ?? network.isGiven(path) ?? talk.isGiven(path) ?? false
    }
}

/// Everything a call takes from the command line.
struct CallOptions: ParsableArguments {
    @OptionGroup var settings: SettingsOptions
    @OptionGroup(title: "Run") var run: RunOptions
    @OptionGroup(title: "Identity") var identity: IdentityOptions

    /// The call's settings: the command line's over the configuration file's, as it reads now.
    func resolved(warn: (String) -> Void) throws -> CallSettings {
        let file = try settings.configuration.load()
        for warning in file.warnings { warn(warning) }
        return try CallSettings(settings, run: run, identity: identity, file: file)
    }
}

/// What a call is built from: the command line's settings, with those it left out taken from
/// the configuration file, else the defaults.
struct CallSettings {
    var audio: AudioOptions
    var network: NetworkOptions
    var talk: TalkOptions
    var run: RunOptions
    var identity: IdentityOptions

    /// The command line's options over `file`'s settings; any combination the two make that
    /// does not hold is a configuration fault naming the file.
    init(_ given: SettingsOptions, run: RunOptions = RunOptions(), identity: IdentityOptions = IdentityOptions(), file: ConfigurationFile) throws {
        audio = given.audio.filled(from: file)
        network = given.network.filled(from: file)
        talk = given.talk.filled(from: file)
        self.run = run
        self.identity = identity
        do {
            try self.audio.validate()
            try self.network.validate()
            try self.talk.validate()
        } catch {
            throw Failure(.configuration, message: "\(file.path) with the command line: \(Self.message(for: error))")
        }
    }

    /// Builds the call the settings describe, with its audio endpoints.
    /// A page (`page`) sends its file once `start` is set, plays nothing and listens on any free
    /// port unless --port says which.
    func makeCall(interactive: Bool, headless: Bool, logger: Logger, page start: SharedFlag? = nil) throws -> Call {
        var configuration = try callConfiguration(interactive: interactive, headless: headless)
        if start != nil {
            configuration.isPage = true
            configuration.mode = .open
            configuration.port = network.givenPort ?? 0
        }
        let (frame, period, bufferMilliseconds) = (configuration.period, configuration.devicePeriod, audio.audioBufferMilliseconds)
        let source: AudioSource = try audio.inputFile.map { path in
            // A file that is not there (or may not be read) is missing input; one that is, but is no WAV, bad input.
            try failing(as: access(path, R_OK) == 0 ? .badInput : .noInput) { try WAVFileSource(path: path, frameLength: frame, start: start) }
        } ?? ALSACaptureSource(device: audio.capture, frameLength: frame, period: period, bufferMilliseconds: bufferMilliseconds, logger: logger)
        let sink: AudioSink = try start.map { _ in NullSink(frameLength: frame) } ?? audio.outputFile.map { path in
            try failing(as: .cannotCreate) { try WAVFileSink(path: path, frameLength: frame) }
        } ?? ALSAPlaybackSink(device: audio.playback, frameLength: frame, period: period, bufferMilliseconds: bufferMilliseconds, logger: logger)

        return try failing(as: .unavailable) { try Call(configuration: configuration, source: source, sink: sink, logger: logger) }
    }

    /// Plain RTP is for interop only: say so at every start, on the screen and in the log.
    func warnIfUnencrypted(logger: Logger) {
        guard network.unencrypted else { return }
        let warning = "unencrypted: anyone on the LAN can listen to this call and talk into it (--unencrypted)"
        StandardStream.error.write("warning: \(warning)\n")
        logger.warning("\(warning)")
    }

    func writeStatistics(of call: Call) throws {
        if let path = run.statsJSON {
            try failing(as: .cannotCreate) { try PrivateFile.writeOutput(path, Array(call.statistics().jsonData())) }
        }
    }

    func callConfiguration(interactive: Bool, headless: Bool = false) throws -> CallConfiguration {
        var configuration = CallConfiguration()
        configuration.port = network.port
        configuration.bindAddress = try network.bindAddress()
        configuration.staticPeers = try network.peerAddresses()
        if let name = network.name { configuration.name = name }
        configuration.rooms = try network.rooms()
        configuration.target = try network.callTarget()
        configuration.refusesPages = !network.pages
        configuration.pageDuckingDecibels = network.pageDucking
        try talk.apply(to: &configuration, interactive: interactive, fileInput: audio.inputFile != nil, headless: headless)
        try audio.apply(to: &configuration)
        configuration.stallForTesting = try run.stall()
        if !network.unencrypted {
            configuration.security = try failing(as: .cannotCreate) { try identity.callSecurity(rekeySeconds: network.rekeySeconds) }
        }
        configuration.encoder.constrainedVariableBitrate = configuration.security != nil
        if let security = configuration.security {
            let targets = [("--to", configuration.target)] + (try talk.buttonTargets())
            for (option, target) in targets {
                guard case .device(let device) = target else { continue }
                try Self.checkPaired(device, option: option, in: security.trustedDevices)
            }
        }
        return configuration
    }

    /// A whisper's device is one of the paired devices, by the name it was paired under or
    /// its fingerprint: a typo would otherwise send nothing, silently.
    private static func checkPaired(_ device: GroupName, option: String, in store: TrustedDeviceStore) throws {
        let paired = try failing(as: .cannotCreate) { try store.load() }
        let known = paired.contains { $0.name == device.text || $0.keyBytes.map { Fingerprint(publicKey: $0).matches(device.text) } == true }
        guard !known else { return }
        let names = paired.map { TerminalText.sanitized($0.name) }.sorted()
        throw ValidationError(
            "\(option) \(TerminalText.sanitized(device.text)): no paired device is called that or has that fingerprint; "
                + (names.isEmpty ? "no device is paired yet" : "paired: \(names.joined(separator: ", "))")
                + " (or 'all', or 'room:NAME')")
    }
}

extension CallSettings {
    /// The setting at `path` as the call uses it, as `intercom config` writes it.
    func shownValue(_ path: String) -> ConfigurationText.Value? {
        audio.shownValue(path) ?? network.shownValue(path) ?? talk.shownValue(path)
    }

    /// An option group's complaint without swift-argument-parser's framing.
    static func message(for error: any Error) -> String {
        if let validation = error as? ValidationError { return validation.message }
        return SettingsOptions.fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
    }
}
