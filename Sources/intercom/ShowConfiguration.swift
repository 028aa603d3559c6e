import ArgumentParser
import IntercomCall

/// `intercom config`: the settings a call would use, and where each came from.
struct ShowConfiguration: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective configuration and where each value came from.",
        discussion: "Reads \(ConfigurationFile.defaultPath) (TOML: [audio], [network], [talk] tables); flags given here override it as they would for a call."
    )

    @OptionGroup(title: "Audio") var audio: AudioOptions
    @OptionGroup(title: "Network") var network: NetworkOptions
    @OptionGroup(title: "Talk") var talk: TalkOptions

    func run() throws {
        let file: ConfigurationFile
        do {
            file = try ConfigurationFile.load()
        } catch {
            throw ValidationError("\(error)")
        }
        for warning in file.warnings { print("warning: \(warning)") }
        let given = Array(CommandLine.arguments.drop { $0 != Self._commandName }.dropFirst())
        let effective = try Talk.parse(file.arguments + given)
        print("# \(file.path)\(file.entries.isEmpty ? " (no settings)" : "")")
        var table = ""
        for setting in ConfigurationSchema.settings {
            if setting.table != table {
                print("\n[\(setting.table)]")
                table = setting.table
            }
            let source: String
            if flags(of: setting).contains(where: given.contains) {
                source = "command line"
            } else if let entry = file.entries.first(where: { $0.setting.path == setting.path }) {
                source = "\(file.path):\(entry.line)"
            } else {
                source = "default"
            }
            let line = "\(setting.key) = \(value(of: setting, in: effective))"
            print(line.padding(toLength: max(line.count, 40), withPad: " ", startingAt: 0) + " # \(source)")
        }
    }

    private func flags(of setting: ConfigurationSchema.Setting) -> [String] {
        switch setting.kind {
        case .toggle(let whenTrue, let whenFalse): [whenTrue, whenFalse].compactMap { $0.map { "--" + $0 } }
        default: ["--" + setting.option]
        }
    }

    private func quoted(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "(none)" }

    /// The value a call would use, read from the parsed options.
    private func value(of setting: ConfigurationSchema.Setting, in talk: Talk) -> String {
        let a = talk.audio, n = talk.network, t = talk.talk
        switch setting.path {
        case "audio.capture": return quoted(a.capture)
        case "audio.playback": return quoted(a.playback)
        case "audio.buffer-ms": return "\(a.audioBufferMilliseconds)"
        case "audio.frame-ms": return "\(a.frameMilliseconds)"
        case "audio.bitrate": return "\(a.bitrate)"
        case "audio.fec": return "\(!a.noFEC)"
        case "audio.dtx": return "\(a.dtx)"
        case "audio.aec": return "\(!a.noEchoCancellation)"
        case "audio.echo-tail-ms": return "\(a.echoTailMilliseconds)"
        case "audio.denoise": return "\(!a.noDenoise)"
        case "audio.agc": return "\(!a.noAutomaticGainControl)"
        case "network.port": return "\(n.port)"
        case "network.peers": return "[" + n.peer.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        case "network.discovery": return "\(!n.noDiscovery)"
        case "network.name": return quoted(n.name ?? defaultPeerName())
        case "talk.mode": return t.mode?.rawValue ?? "(ptt at a terminal, else open)"
        case "talk.vox-threshold": return "\(t.voxThreshold)"
        case "talk.ptt-device": return quoted(t.pttDevice)
        case "talk.ptt-key": return quoted(t.pttKey)
        case "talk.ptt-max-seconds": return "\(t.pttMaxSeconds)"
        case "talk.ptt-latch": return "\(t.pttLatch)"
        case "talk.ptt-hold-ms": return "\(t.pttHoldMilliseconds)"
        case "talk.tones": return "\(t.tones)"
        case "talk.ptt-gpio": return quoted(t.pttGPIO)
        case "talk.gpio-active-high": return "\(t.gpioActiveHigh)"
        case "talk.tx-lamp-gpio": return quoted(t.transmitLampGPIO)
        case "talk.rx-lamp-gpio": return quoted(t.receiveLampGPIO)
        default: return "?"
        }
    }
}
