import IntercomCore

/// What a peer publishes about itself: an `_intercom._udp` service with its name, UDP port
/// and a short TXT record (`v`, `id`, `codec`, `ptime`, `chan`, `fp`).
public struct ServiceAnnouncement: Equatable, Sendable {
    /// The DNS-SD service type every intercom peer publishes and browses.
    public static let serviceType = "_intercom._udp"
    /// The protocol version announced in `v`: 2 since calls are encrypted (`fp`), 3 since the
    /// encrypted frames are of version 2 (an initiation with a cookie MAC, cookie replies).
    public static let protocolVersion = 3
    /// A DNS label's limit, which bounds a service instance name.
    public static let maximumNameBytes = 63

    /// The TXT keys intercom uses; short, as RFC 6763 asks.
    public enum Key {
        public static let version = "v"
        public static let peerID = "id"
        public static let codec = "codec"
        public static let frameMilliseconds = "ptime"
        /// Reserved for channels; empty for now.
        public static let channel = "chan"
        /// The fingerprint of the device's key for an encrypted call; empty for `--unencrypted`.
        /// A hint for whom to call, never trust: the handshake proves the key.
        public static let fingerprint = "fp"
        /// Present on a device waiting to pair (`intercom pair`), not on a call: `1` when it
        /// printed its own code and only waits, `2` when it was given one and also looks.
        public static let pairing = "pair"
    }

    public enum Pairing: String, Sendable {
        case waiting = "1"
        case withCode = "2"
    }

    /// The service instance name: the peer's display name. Avahi may publish it as
    /// "name #2" after a collision; `DiscoveryEvent.published` reports the name used.
    public let name: String
    public let port: UInt16
    public let peerID: PeerID
    public let codec: String
    public let frameMilliseconds: Int
    public let channel: String
    public let fingerprint: String
    public let pairing: Pairing?
    /// Where to publish: one interface and IP version (a call bound to one address), or
    /// every interface when nil.
    public var scope: Scope?

    public struct Scope: Equatable, Sendable {
        public var interfaceIndex: Int32
        public var ipv6: Bool

        public init(interfaceIndex: Int32, ipv6: Bool) {
            self.interfaceIndex = interfaceIndex
            self.ipv6 = ipv6
        }
    }
    /// The TXT record, in the order published.
    public let txtEntries: [String]

    /// Checks that the name fits a DNS label and every TXT entry fits its 255 bytes.
    public init(
        name: String,
        port: UInt16,
        peerID: PeerID,
        codec: String = "opus",
        frameMilliseconds: Int = 10,
        channel: String = "",
        fingerprint: String = "",
        pairing: Pairing? = nil
    ) throws(DiscoveryError) {
        guard !name.isEmpty, name.utf8.count <= Self.maximumNameBytes else {
            throw .invalidAnnouncement("the name '\(name)' must have 1 to \(Self.maximumNameBytes) bytes of UTF-8")
        }
        let pairs = [
            (Key.version, String(Self.protocolVersion)),
            (Key.peerID, peerID.description),
            (Key.codec, codec),
            (Key.frameMilliseconds, String(frameMilliseconds)),
            (Key.channel, channel),
            (Key.fingerprint, fingerprint),
        ] + (pairing.map { [(Key.pairing, $0.rawValue)] } ?? [])
        var entries: [String] = []
        for (key, value) in pairs {
            guard let entry = TXTRecord.entry(key: key, value: value) else {
                throw .invalidAnnouncement("the TXT entry \(key)=\(value) is longer than \(TXTRecord.maximumEntryBytes) bytes")
            }
            entries.append(entry)
        }
        self.name = name
        self.port = port
        self.peerID = peerID
        self.codec = codec
        self.frameMilliseconds = frameMilliseconds
        self.channel = channel
        self.fingerprint = fingerprint
        self.pairing = pairing
        txtEntries = entries
    }
}
