import IntercomCore

/// A peer's `_intercom._udp` service as found on the LAN, merged over every interface and
/// IP version it was seen on.
public struct DiscoveredPeer: Equatable, Sendable {
    /// The service instance name: the peer's display name, unique on the LAN.
    public var serviceName: String
    /// The host the service runs on, such as `pi-kitchen.local`.
    public var hostName: String
    /// Every address the service resolved to, IPv4 first, each with the service's port.
    /// IPv6 link-local addresses carry the interface they were found on as their zone.
    public var addresses: [SocketAddress]
    /// The TXT record's pairs, keys lowercased.
    public var txt: [String: String]
    /// Monotonic nanoseconds when the service was first resolved.
    public var firstSeenNanoseconds: UInt64
    /// Monotonic nanoseconds of the latest resolution or confirmation.
    public var lastSeenNanoseconds: UInt64

    public init(
        serviceName: String,
        hostName: String,
        addresses: [SocketAddress],
        txt: [String: String],
        firstSeenNanoseconds: UInt64,
        lastSeenNanoseconds: UInt64
    ) {
        self.serviceName = serviceName
        self.hostName = hostName
        self.addresses = addresses
        self.txt = txt
        self.firstSeenNanoseconds = firstSeenNanoseconds
        self.lastSeenNanoseconds = lastSeenNanoseconds
    }

    /// The peer's identity from the TXT record's `id`; nil when absent or malformed.
    public var peerID: PeerID? { txt[ServiceAnnouncement.Key.peerID].flatMap { PeerID(hexadecimal: $0) } }

    /// The protocol version from the TXT record's `v`; nil when absent or malformed.
    public var protocolVersion: Int? { txt[ServiceAnnouncement.Key.version].flatMap { Int($0) } }
    /// The announced key fingerprint (a hint: only the handshake proves it); nil when absent.
    public var fingerprint: String? { txt[ServiceAnnouncement.Key.fingerprint] }
    /// How the device waits to pair (`intercom pair`); nil for a call.
    public var pairing: ServiceAnnouncement.Pairing? { txt[ServiceAnnouncement.Key.pairing].flatMap(ServiceAnnouncement.Pairing.init) }
    public var isPairing: Bool { pairing != nil }

    /// The UDP port the service announced (every address carries it too).
    public var port: UInt16? { addresses.first?.port }

    /// Whether two sightings describe the same service, whenever each was seen.
    func hasSameContent(as other: DiscoveredPeer) -> Bool {
        serviceName == other.serviceName && hostName == other.hostName && addresses == other.addresses && txt == other.txt
    }
}
