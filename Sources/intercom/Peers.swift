import ArgumentParser
import FoundationEssentials
import IntercomCall
import IntercomCore
import IntercomIO
import IntercomSecurity

/// `intercom peers`: who is on the LAN, as mDNS sees it.
struct Peers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the intercom peers found on the LAN by mDNS.",
        discussion: """
            Browses for _intercom._udp through avahi-daemon, publishing nothing, and lists what it \
            found. A device's rooms travel only inside the encrypted call: where a daemon runs \
            (--socket), the rooms its paired devices told it are shown, else '?'.
            """
    )

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    @Option(help: ArgumentHelp("How long to look.", valueName: "SECONDS"))
    var wait: Double = 2

    @Option(help: ArgumentHelp("A running daemon's status socket, asked for the rooms of the devices in its call.", valueName: "PATH"))
    var socket = StatusSocket.defaultPath

    @OptionGroup(title: "Identity") var identity: IdentityOptions

    func validate() throws {
        guard wait.isFinite, wait >= 0, wait <= 3600 else { throw ValidationError("--wait must be between 0 and 3600 seconds") }
    }

    func run() throws {
        let discovery = try ServiceDiscovery(announcing: nil) { event in
            if case .daemonUnavailable(let error) = event {
                StandardStream.error.write("intercom: warning: \(error); no peers can be found (call them with --peer HOST:PORT)\n")
            }
        }
        SystemClock.sleep(untilMonotonic: discovery.startedAtNanoseconds + MediaTime.nanoseconds(.seconds(wait)))
        let ownKey = try identity.identity().publicKey
        let known = try identity.trustedDevices().trustedKeys().union([ownKey])
        var listings = discovery.peers.map { peer in
            PeerListing(peer, startedAt: discovery.startedAtNanoseconds, now: SystemClock.monotonicNanoseconds(), trustedKeys: known)
        }
        discovery.stop()
        if let daemon = daemonPeers() {
            for index in listings.indices {
                listings[index].rooms = listings[index].fingerprint.flatMap { fingerprint in daemon.first { $0.fingerprint == fingerprint }?.rooms }
            }
        }

        if json {
            print(String(decoding: try PeerListing.encoder.encode(listings), as: UTF8.self))
        } else if listings.isEmpty {
            print("no intercom peers found in \(wait) s")
        } else {
            printTable(listings)
        }
    }

    private func printTable(_ listings: [PeerListing]) {
        let rows = [["NAME", "FINGERPRINT", "PAIRED", "ROOMS", "ADDRESSES", "PORT", "VERSION", "LAST SEEN"]] + listings.map { listing in
            [
                listing.name,
                listing.fingerprint ?? "-",
                listing.fingerprint == nil ? "unencrypted" : listing.paired ? "yes" : "not paired",
                listing.rooms.map { $0.isEmpty ? "-" : $0.map { TerminalText.sanitized($0) }.joined(separator: ",") } ?? "?",
                listing.addresses.joined(separator: " "),
                String(listing.port),
                listing.version.map(String.init) ?? "?",
                "\(listing.lastSeenSecondsAgo.fixed(1)) s ago",
            ]
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = zip(row, widths).map { cell, width in cell.padded(to: width) }
            print(cells.joined(separator: "  ").trimmingWhitespace())
        }
    }

    /// The peers of the daemon running at `socket` with the rooms they told it, or nil where
    /// none runs or it does not answer this user.
    private func daemonPeers() -> [PeerSnapshot]? {
        guard let path = StatusSocket.running(at: socket),
              let reply = try? StatusSocket.ask(.status, path: path), (try? StatusReply(line: reply)) == nil,
              let report = try? StatusReport(json: Data(reply.utf8))
        else { return nil }
        return report.call.peers
    }
}
