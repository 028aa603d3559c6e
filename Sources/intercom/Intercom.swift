import ArgumentParser
import Foundation
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
            Talk.self, Daemon.self, Status.self, Peers.self, Pair.self, Paired.self, Unpair.self, Devices.self, ShowConfiguration.self,
            Loopback.self, SessionDescriptionCommand.self, Relay.self, Announce.self,
        ],
        defaultSubcommand: Talk.self
    )

    /// Runs the command line, with the configuration file's settings standing before the
    /// user's own arguments for the call, so that flags on the command line win.
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        // The identity's option may stand before the subcommand's name too (`intercom --state-dir
        // DIR pair`): it is handed to the subcommand, whose option group reads it.
        var identityArguments: [String] = []
        while let head = arguments.first, head == "--state-dir" || head.hasPrefix("--state-dir=") {
            identityArguments.append(arguments.removeFirst())
            if head == "--state-dir", !arguments.isEmpty { identityArguments.append(arguments.removeFirst()) }
        }
        let subcommands = configuration.subcommands.map { $0._commandName }
        let first = arguments.first ?? ""
        if subcommands.contains(first), first != Talk._commandName {
            arguments.insert(contentsOf: identityArguments, at: 1)
        } else if !["-h", "--help", "help", "--version"].contains(first) || !identityArguments.isEmpty {
            if first == Talk._commandName { arguments.removeFirst() }
            arguments = identityArguments + arguments
            do {
                let file = try failing(as: .configuration) { try ConfigurationFile.load() }
                for warning in file.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
                arguments = [Talk._commandName] + file.arguments + arguments
            } catch {
                exit(reporting: error)
            }
        }
        do {
            var command = try parseAsRoot(arguments)
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
