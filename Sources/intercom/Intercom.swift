import ArgumentParser
import FoundationEssentials
import IntercomCall

@main
struct Intercom: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "intercom",
        abstract: "A peer-to-peer voice intercom for the LAN.",
        discussion: """
            With no subcommand, intercom joins the call in talk mode. Peers are found on the \
            LAN by mDNS, or named with --peer HOST:PORT.
            """,
        version: intercomVersion,
        subcommands: [
            Talk.self, Daemon.self, Status.self, Peers.self, Pair.self, Paired.self, Unpair.self, Volume.self, Mute.self, Unmute.self, Page.self, Devices.self, ShowConfiguration.self,
            Loopback.self, SessionDescriptionCommand.self, Relay.self, Announce.self, BenchDSP.self,
        ],
        defaultSubcommand: Talk.self
    )

    /// `--state-dir` may stand before the subcommand's name too (`intercom --state-dir DIR
    /// pair`): swift-argument-parser hands it to the subcommand's own identity options.
    @OptionGroup(title: "Identity") var identity: IdentityOptions

    /// Runs the command line; faults while running exit with their own sysexits code.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(reporting: error)
        }
    }
}
