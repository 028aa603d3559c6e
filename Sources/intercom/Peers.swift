import ArgumentParser
import Foundation
import IntercomCore
import IntercomIO
import IntercomSecurity

/// `intercom peers`: who is on the LAN, as mDNS sees it.
struct Peers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the intercom peers found on the LAN by mDNS.",
        discussion: "Browses for _intercom._udp through avahi-daemon, publishing nothing, and lists what it found."
    )

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    @Option(help: ArgumentHelp("How long to look.", valueName: "SECONDS"))
    var wait: Double = 2

    @OptionGroup(title: "Identity") var identity: IdentityOptions

    func validate() throws {
        guard wait.isFinite, wait >= 0, wait <= 3600 else { throw ValidationError("--wait must be between 0 and 3600 seconds") }
    }

    func run() throws {
        let discovery = try ServiceDiscovery(announcing: nil) { event in
            if case .daemonUnavailable(let error) = event {
                FileHandle.standardError.write(Data("intercom: warning: \(error); no peers can be found (call them with --peer HOST:PORT)\n".utf8))
            }
        }
        SystemClock.sleep(untilMonotonic: discovery.startedAtNanoseconds + UInt64(wait * 1e9))
        let ownKey = try identity.identity().publicKey
        let known = try identity.trustedDevices().trustedKeys().union([ownKey])
        let listings = discovery.peers.map { peer in
            PeerListing(peer, startedAt: discovery.startedAtNanoseconds, now: SystemClock.monotonicNanoseconds(), trustedKeys: known)
        }
        discovery.stop()

        if json {
            print(String(decoding: try PeerListing.encoder.encode(listings), as: UTF8.self))
        } else if listings.isEmpty {
            print("no intercom peers found in \(wait) s")
        } else {
            printTable(listings)
        }
    }

    private func printTable(_ listings: [PeerListing]) {
        let rows = [["NAME", "FINGERPRINT", "PAIRED", "ADDRESSES", "PORT", "VERSION", "LAST SEEN"]] + listings.map { listing in
            [
                listing.name,
                listing.fingerprint ?? "-",
                listing.fingerprint == nil ? "unencrypted" : listing.paired ? "yes" : "not paired",
                listing.addresses.joined(separator: " "),
                String(listing.port),
                listing.version.map(String.init) ?? "?",
                String(format: "%.1f s ago", listing.lastSeenSecondsAgo),
            ]
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = zip(row, widths).map { cell, width in cell.padding(toLength: width, withPad: " ", startingAt: 0) }
            print(cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }
}

/// One peer as `intercom peers --json` and `intercom announce` print it.
struct PeerListing: Encodable {
    var name: String
    var host: String
    /// Numeric addresses without the port; IPv6 link-local ones with their zone (`%lan0`).
    var addresses: [String]
    var port: UInt16
    var version: Int?
    var id: String?
    /// The fingerprint the peer announces (nil for an unencrypted call), and whether it is ours or
    /// a paired device's: only those are called.
    var fingerprint: String?
    var paired: Bool
    var txt: [String: String]
    var lastSeenSecondsAgo: Double
    /// From the start of discovery to the peer's first appearance.
    var discoveredAfterSeconds: Double

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(_ peer: DiscoveredPeer, startedAt: UInt64, now: UInt64, trustedKeys: Set<[UInt8]> = []) {
        name = TerminalText.sanitized(peer.serviceName)
        host = TerminalText.sanitized(peer.hostName, limit: 255)
        addresses = peer.addresses.map(Self.numericHost)
        port = peer.port ?? 0
        version = peer.protocolVersion
        id = peer.peerID?.description
        let announced = peer.fingerprint.flatMap { $0.isEmpty ? nil : TerminalText.sanitized($0, limit: 24) }
        fingerprint = announced
        paired = announced.map { text in trustedKeys.contains { Fingerprint(publicKey: $0).matches(text) } } ?? false
        txt = Dictionary(peer.txt.map { (TerminalText.sanitized($0.key), TerminalText.sanitized($0.value, limit: 255)) }) { first, _ in first }
        lastSeenSecondsAgo = Double(now > peer.lastSeenNanoseconds ? now - peer.lastSeenNanoseconds : 0) / 1e9
        discoveredAfterSeconds = Double(peer.firstSeenNanoseconds > startedAt ? peer.firstSeenNanoseconds - startedAt : 0) / 1e9
    }

    private static func numericHost(_ address: SocketAddress) -> String {
        guard address.scopeID != 0 else { return address.host }
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE))
        guard if_indextoname(address.scopeID, &name) != nil else { return "\(address.host)%\(address.scopeID)" }
        return "\(address.host)%\(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
    }
}
