import ArgumentParser
import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
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

/// The configuration file's settings, read by the same options as the command line's.
private struct FileSettings: ParsableArguments {
    @OptionGroup var audio: AudioOptions
    @OptionGroup var network: NetworkOptions
    @OptionGroup var talk: TalkOptions
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
    init(audio: AudioOptions, network: NetworkOptions, talk: TalkOptions, run: RunOptions, identity: IdentityOptions, file: ConfigurationFile) throws {
        let fromFile: FileSettings
        do {
            fromFile = try FileSettings.parse(file.arguments)
        } catch {
            throw Failure(.configuration, message: "\(file.path): \(FileSettings.message(for: error))")
        }
        self.audio = audio.filled(from: fromFile.audio)
        self.network = network.filled(from: fromFile.network)
        self.talk = talk.filled(from: fromFile.talk)
        self.run = run
        self.identity = identity
        do {
            try self.audio.validate()
            try self.network.validate()
            try self.talk.validate()
        } catch {
            throw Failure(.configuration, message: "\(file.path) with the command line: \(FileSettings.message(for: error))")
        }
    }

    /// Builds the call the settings describe, with its audio endpoints.
    func makeCall(interactive: Bool, headless: Bool, logger: Logger) throws -> Call {
        let configuration = try callConfiguration(interactive: interactive, headless: headless)
        let frame = configuration.frameSamples
        let source: AudioSource = try audio.inputFile.map { path in
            // A file that is not there (or may not be read) is missing input; one that is, but is no WAV, bad input.
            try failing(as: access(path, R_OK) == 0 ? .badInput : .noInput) { try WAVFileSource(path: path, frameSamples: frame) }
        } ?? ALSACaptureSource(device: audio.capture, frameSamples: frame, bufferMilliseconds: audio.audioBufferMilliseconds, logger: logger)
        let sink: AudioSink = try audio.outputFile.map { path in
            try failing(as: .cannotCreate) { try WAVFileSink(path: path, frameSamples: frame) }
        } ?? ALSAPlaybackSink(device: audio.playback, frameSamples: frame, bufferMilliseconds: audio.audioBufferMilliseconds, logger: logger)

        return try failing(as: .unavailable) { try Call(configuration: configuration, source: source, sink: sink, logger: logger) }
    }

    /// Plain RTP is for interop only: say so at every start, on the screen and in the log.
    func warnIfUnencrypted(logger: Logger) {
        guard network.unencrypted else { return }
        let warning = "unencrypted: anyone on the LAN can listen to this call and talk into it (--unencrypted)"
        FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
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
        try talk.apply(to: &configuration, interactive: interactive, fileInput: audio.inputFile != nil, headless: headless)
        try audio.apply(to: &configuration)
        configuration.stallForTesting = try run.stall()
        if !network.unencrypted {
            configuration.security = try failing(as: .cannotCreate) { try identity.callSecurity(rekeySeconds: network.rekeySeconds) }
        }
        configuration.encoder.constrainedVariableBitrate = configuration.security != nil
        return configuration
    }
}

extension FileSettings {
    /// An option group's complaint without swift-argument-parser's framing.
    static func message(for error: any Error) -> String {
        if let validation = error as? ValidationError { return validation.message }
        return fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
    }
}
