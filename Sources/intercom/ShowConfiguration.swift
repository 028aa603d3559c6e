import Foundation
import ArgumentParser
import IntercomCall
import IntercomCore

/// `intercom config`: the settings a call would use, and where each came from.
struct ShowConfiguration: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective configuration and where each value came from.",
        discussion: "Reads \(ConfigurationFile.defaultPath) (TOML: [audio], [network], [talk] tables); flags given here override it as they would for a call."
    )

    @OptionGroup var options: SettingsOptions

    func run() throws {
        let file = try options.configuration.load()
        // Warnings go to stderr: what is printed is a configuration file itself.
        for warning in file.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        let effective = try CallSettings(options, file: file)
        print("# \(file.path)\(file.entries.isEmpty ? " (no settings)" : "")")
        var table = ""
        for setting in ConfigurationSchema.settings {
            if setting.table != table {
                print("\n[\(setting.table)]")
                table = setting.table
            }
            let source: String
            if options.isGiven(setting.path) {
                source = "command line"
            } else if let entry = file.entries.first(where: { $0.setting.path == setting.path }) {
                source = "\(file.path):\(entry.line)"
            } else {
                source = "default"
            }
            // Valid TOML that reads back to the same settings; an unset one stays a comment.
            let line = value(of: setting, in: effective).map { "\(setting.key) = \(ConfigurationText.literal($0))" }
                ?? "# \(setting.key) = (not set)"
            print(line.padding(toLength: max(line.count, 40), withPad: " ", startingAt: 0) + " # \(source)")
        }
    }

    /// The value a call would use, read from the parsed options; nil where none is set.
    private func value(of setting: ConfigurationSchema.Setting, in settings: CallSettings) -> ConfigurationText.Value? {
        let (audio, network, options) = (settings.audio, settings.network, settings.talk)
        func text(_ value: String?) -> ConfigurationText.Value? { value.map { .string($0) } }
        switch setting.path {
        case "audio.capture": return text(audio.capture)
        case "audio.playback": return text(audio.playback)
        case "audio.buffer-ms": return .integer(audio.audioBufferMilliseconds)
        case "audio.frame-ms": return .integer(audio.frameMilliseconds)
        case "audio.bitrate": return .integer(audio.bitrate)
        case "audio.fec": return .boolean(audio.forwardErrorCorrection)
        case "audio.dtx": return .boolean(audio.discontinuousTransmission)
        case "audio.aec": return .boolean(audio.echoCancellation)
        case "audio.echo-tail-ms": return .integer(audio.echoTailMilliseconds)
        case "audio.denoise": return .boolean(audio.denoise)
        case "audio.agc": return .boolean(audio.automaticGainControl)
        case "network.port": return .integer(network.port)
        case "network.bind": return text(network.bind)
        case "network.peers": return .array(network.peer.map { .string($0) })
        case "network.discovery": return .boolean(network.discovery)
        case "network.name": return .string(network.name ?? defaultPeerName())
        case "talk.mode": return text(options.mode?.rawValue)
        case "talk.vox-threshold": return .integer(options.voxThreshold)
        case "talk.ptt-device": return text(options.pttDevice)
        case "talk.ptt-key": return text(options.pttKey)
        case "talk.ptt-max-seconds": return .float(options.pttMaxSeconds)
        case "talk.ptt-latch": return .boolean(options.pttLatch)
        case "talk.ptt-hold-ms": return .integer(options.pttHoldMilliseconds)
        case "talk.tones": return .boolean(options.tones)
        case "talk.ptt-gpio": return text(options.pttGPIO)
        case "talk.gpio-active-high": return .boolean(options.gpioActiveHigh)
        case "talk.tx-lamp-gpio": return text(options.transmitLampGPIO)
        case "talk.rx-lamp-gpio": return text(options.receiveLampGPIO)
        default: return nil
        }
    }
}
