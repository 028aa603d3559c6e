import ArgumentParser
import FoundationEssentials
import Glibc
import IntercomCall
import IntercomCore
import IntercomIO
import Logging

/// `intercom loopback`: the whole call on one machine, no sound card, no other peer.
struct Loopback: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Demonstrate a call between two peers in this process, through a simulated network.",
        discussion: """
            Peer A speaks --input-file; peer B writes what it hears to --output-file (default loopback-output.wav). Both \
            talk over loopback UDP through an impairment relay. Profiles: \
            \(ImpairmentProfile.presets.map(\.name).joined(separator: ", ")), or a list such as \
            loss=10,jitter=15ms,delay=30ms,seed=1.
            """
    )

    @OptionGroup(title: "Audio") var audio: AudioOptions

    @Option(help: "The simulated network between the peers.")
    var network = "loss10-jitter30"

    @Flag(name: .shortAndLong, help: "Log more.")
    var verbose = false

    @Flag(help: "Plain RTP between the two peers instead of an encrypted call.")
    var unencrypted = false

    @OptionGroup(title: "Identity") var identity: IdentityOptions

    func run() async throws {
        let logger = makeLogger(verbose: verbose)
        let profile: ImpairmentProfile
        if let preset = ImpairmentProfile.preset(named: network) {
            profile = preset
        } else {
            do {
                profile = try ImpairmentProfile.parse(network)
            } catch {
                throw ValidationError("--network: \(error)")
            }
        }
        let encoder = try audio.encoderConfiguration()
        let input = try audio.inputFile ?? spokenSentence()
        let outputFile = audio.outputFile ?? "loopback-output.wav"
        var demo = LoopbackDemo(inputFile: input, outputFile: outputFile, profile: profile, encoder: encoder)
        demo.adaptiveCodec = audio.adaptiveCodec
        // Both peers are this device, so they trust each other without pairing.
        demo.security = unencrypted ? nil : try identity.callSecurity()
        print("Calling from \(input) to \(outputFile) through the '\(network)' network…")
        let report = try await demo.run(logger: logger)
        let s = report.listener
        print("mouth-to-ear delay   \(report.delayMilliseconds.fixed(1)) ms (jitter buffer target \(s.targetDelayMs.fixed(1)) ms)")
        print("output vs input      correlation \(report.correlation.fixed(3))")
        print("network              \(report.relay.received) packets sent, \(report.relay.dropped) lost, \(report.relay.duplicated) duplicated")
        print("receiver             \(s.received) received, \(s.lost) lost: \(s.recoveredFec) recovered by FEC, \(s.concealed) concealed; \(s.late) late, \(s.duplicated) duplicates")
        print("Listen: \(outputFile)")
    }

    /// A sentence spoken by espeak-ng (installed by scripts/setup) into a temporary file.
    private func spokenSentence() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("intercom-loopback-\(getpid()).wav").path
        let sentence = "This is the intercom loopback demo. Two peers talk through a simulated network, with loss and jitter."
        let status: Int32
        do {
            status = try runProgram(["espeak-ng", "-w", path, sentence])
        } catch {
            throw ValidationError("no --input-file and \(error); run scripts/setup or give --input-file")
        }
        guard status == 0 else { throw ValidationError("espeak-ng failed; give --input-file") }
        return path
    }
}
