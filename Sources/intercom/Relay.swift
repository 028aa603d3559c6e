import ArgumentParser
import IntercomCore
import IntercomIO

/// `intercom relay`: a simulated network between two peers, for tests and benchmarks.
struct Relay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Relay UDP between two peers through a simulated network (loss, delay, jitter, reordering).",
        discussion: """
            Peer A sends to --listen-a; the relay forwards to --peer-b. Peer B's replies go back \
            to A the same way. Profiles: \(ImpairmentProfile.presets.map { $0.name }.joined(separator: ", ")), \
            or a list such as loss=10,jitter=15ms,delay=30ms,burst=5:3,reorder=1,dup=1,seed=42.
            """
    )

    @Option(name: .customLong("listen-a"), help: ArgumentHelp("Where peer A sends.", valueName: "HOST:PORT"))
    var listenA = "127.0.0.1:6000"

    @Option(name: .customLong("listen-b"), help: ArgumentHelp("Where the relay talks to peer B from.", valueName: "HOST:PORT"))
    var listenB = "127.0.0.1:6001"

    @Option(name: .customLong("peer-b"), help: ArgumentHelp("Peer B's address.", valueName: "HOST:PORT"))
    var peerB: String

    @Option(help: "The network from A to B, by preset name or parameters.")
    var network = "clean"

    @Option(name: .customLong("network-back"), help: "The network from B to A (default: the same as --network).")
    var networkBack: String?

    @Option(help: ArgumentHelp("Stop after this many seconds (or on SIGINT/SIGTERM).", valueName: "SECONDS"))
    var duration: Double?

    func run() throws {
        let stop = StopSignal()
        let relay = try ImpairmentRelay(.init(
            peerB: try address(peerB, "--peer-b"),
            aToB: try profile(network, "--network"),
            bToA: try profile(networkBack ?? network, "--network-back"),
            sideABind: try address(listenA, "--listen-a"),
            sideBBind: try address(listenB, "--listen-b")
        ))
        print("relaying \(relay.sideAAddress) → \(peerB) with '\(network)'")
        stop.wait(seconds: duration)
        relay.stop()
        for direction in ImpairmentRelay.Direction.allCases {
            let c = relay.counters(direction)
            print("\(direction): \(c.received) received, \(c.forwarded) forwarded, \(c.dropped) dropped, \(c.duplicated) duplicated")
        }
    }

    private func address(_ text: String, _ label: String) throws -> SocketAddress {
        do {
            return try SocketAddress.parse(text, label: label)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    private func profile(_ text: String, _ label: String) throws -> ImpairmentProfile {
        if let preset = ImpairmentProfile.preset(named: text) { return preset }
        do {
            return try ImpairmentProfile.parse(text)
        } catch {
            throw ValidationError("\(label): \(error)")
        }
    }
}
