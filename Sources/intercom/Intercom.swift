import ArgumentParser

@main
struct Intercom: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "intercom",
        abstract: "A peer-to-peer voice intercom for the LAN.",
        discussion: """
            With no subcommand, intercom joins the call in talk mode. Peers are found on the \
            LAN by mDNS, or named with --peer HOST:PORT.
            """,
        subcommands: [Talk.self, Loopback.self, SessionDescriptionCommand.self, Relay.self],
        defaultSubcommand: Talk.self
    )
}
