import FoundationEssentials
import Glibc
import IntercomCore
import IntercomSecurity

/// One peer as `intercom peers --json` and `intercom announce` print it.
public struct PeerListing: Codable, Sendable {
    public var name: String
    public var host: String
    /// Numeric addresses without the port; IPv6 link-local ones with their zone (`%lan0`).
    public var addresses: [String]
    public var port: UInt16
    public var version: Int?
    public var id: String?
    /// The fingerprint the peer announces (nil for an unencrypted call), and whether it is ours or
    /// a paired device's: only those are called.
    public var fingerprint: String?
    public var paired: Bool
    public var txt: [String: String]
    /// The rooms the device belongs to, as a running daemon of ours heard from it (rooms are
    /// told inside the encrypted call, never in mDNS); nil where none could say.
    public var rooms: [String]?
    public var lastSeenSecondsAgo: Double
    /// From the start of discovery to the peer's first appearance.
    public var discoveredAfterSeconds: Double

    /// snake_case keys, sorted, as the command line prints them.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    public init(_ peer: DiscoveredPeer, startedAt: UInt64, now: UInt64, trustedKeys: Set<[UInt8]> = []) {
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
        lastSeenSecondsAgo = MediaTime.seconds(nanoseconds: Double(now > peer.lastSeenNanoseconds ? now - peer.lastSeenNanoseconds : 0))
        discoveredAfterSeconds = MediaTime.seconds(
            nanoseconds: Double(peer.firstSeenNanoseconds > startedAt ? peer.firstSeenNanoseconds - startedAt : 0)
        )
    }

    private static func numericHost(_ address: SocketAddress) -> String {
        guard address.scopeID != 0 else { return address.host }
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE))
        guard if_indextoname(address.scopeID, &name) != nil else { return "\(address.host)%\(address.scopeID)" }
        return "\(address.host)%\(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
    }

    /// Reads what `encoder` wrote.
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()
}

/// One line of `intercom announce`'s output.
public struct DiscoveryEventLine: Codable, Sendable {
    public var event: String
    public var name: String?
    public var id: String?
    public var peer: PeerListing?
    public var message: String?
    public var timeToFirstPeerSeconds: Double?
    /// CLOCK_MONOTONIC, which every network namespace shares: comparable across processes.
    public var atNanoseconds: UInt64
    public var afterSeconds: Double

    public init(event: String, name: String? = nil, id: String? = nil, startedAt: UInt64) {
        self.event = event
        self.name = name
        self.id = id
        atNanoseconds = SystemClock.monotonicNanoseconds()
        afterSeconds = MediaTime.seconds(nanoseconds: Double(atNanoseconds - startedAt))
    }

    public init(_ discoveryEvent: DiscoveryEvent, startedAt: UInt64) {
        let now = SystemClock.monotonicNanoseconds()
        switch discoveryEvent {
        case .appeared(let peer), .updated(let peer), .confirmed(let peer), .disappeared(let peer):
            let event = switch discoveryEvent {
            case .appeared: "appeared"
            case .updated: "updated"
            case .confirmed: "confirmed"
            default: "disappeared"
            }
            self.init(event: event, startedAt: startedAt)
            self.peer = PeerListing(peer, startedAt: startedAt, now: now)
        case .published(let serviceName):
            self.init(event: "published", name: serviceName, startedAt: startedAt)
        case .daemonUnavailable(let error):
            self.init(event: "daemon_unavailable", startedAt: startedAt)
            message = "\(error)"
        case .daemonAvailable:
            self.init(event: "daemon_available", startedAt: startedAt)
        case .failed(let error):
            self.init(event: "failed", startedAt: startedAt)
            message = "\(error)"
        }
    }
}
