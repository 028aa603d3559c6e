import IntercomCore
import IntercomIO
import IntercomSecurity
import Logging

/// Publishes a call on the LAN over mDNS and lets the peers discovery finds join it; they
/// leave on their mDNS goodbye (or on RTCP BYE, or the keepalive timeout, in the call).
/// Without avahi-daemon, one clear warning, and peers named with --peer keep working.
public final class CallDiscovery: Sendable {
    private let discovery: ServiceDiscovery
    /// Set once the call stops: the trusted list's news is no longer acted on.
    private let stopped = SharedFlag()

    /// Whether a discovered peer is one we may call: in an encrypted call, a device whose
    /// announced fingerprint is ours or a paired one's (the handshake then proves the key);
    /// in a plain call, one that is unencrypted too.
    static func isPaired(_ peer: DiscoveredPeer, ownKey: DeviceKey?, trusted: TrustedList?) -> Bool {
        let announced = peer.fingerprint ?? ""
        guard let ownKey else { return announced.isEmpty }
        guard !announced.isEmpty else { return false }
        return ownKey.fingerprint.matches(announced) || trusted?.paired.keys.contains { $0.fingerprint.matches(announced) } == true
    }

    public init(call: Call, logger: Logger) throws {
        let configuration = call.configuration
        let security = configuration.security
        let ownKey = security.map { DeviceKey($0.identity.publicKey) }
        let trusted = call.trustedList
        var announcement = try ServiceAnnouncement(
            name: configuration.name, port: call.localPort, peerID: configuration.peerID,
            frameMilliseconds: MediaTime.milliseconds(frames: configuration.period.samples, rate: VoiceFormat.sampleRate),
            fingerprint: security.map { Fingerprint(publicKey: $0.identity.publicKey).description } ?? ""
        )
        // A call bound to one address is announced on that address's interface and IP version only.
        if let bound = configuration.bindAddress, let index = bound.localInterfaceIndex() {
            announcement.scope = .init(interfaceIndex: index, ipv6: bound.family == .ipv6)
        }
        discovery = try ServiceDiscovery(announcing: announcement) { event in
            switch event {
            case .appeared(let peer), .updated(let peer), .confirmed(let peer):
                guard !peer.isPairing, let address = Self.preferredAddress(of: peer) else { return }
                guard Self.isPaired(peer, ownKey: ownKey, trusted: trusted) else {
                    if case .appeared = event {
                        logger.notice("peer found, not paired: not called", metadata: [
                            "name": "\(TerminalText.sanitized(peer.serviceName))", "fingerprint": "\(TerminalText.sanitized(peer.fingerprint ?? "none"))",
                        ])
                    }
                    return
                }
                if case .appeared = event, security != nil, let version = peer.protocolVersion, version != ServiceAnnouncement.protocolVersion {
                    // A hint (anyone can announce anything): the frames it sends will tell for sure.
                    logger.notice("""
                        peer \(TerminalText.sanitized(peer.serviceName)) announces protocol version \(version), \
                        this build speaks \(ServiceAnnouncement.protocolVersion): update one of them if it never joins
                        """)
                }
                logger.info("peer found", metadata: [
                    "name": "\(TerminalText.sanitized(peer.serviceName))", "address": "\(address)",
                    "after_ms": "\((peer.firstSeenNanoseconds - call.startedAtNanoseconds) / 1_000_000)",
                ])
                call.discovered(.appeared(name: peer.serviceName, address: address))
            case .disappeared(let peer):
                logger.info("peer left", metadata: ["name": "\(TerminalText.sanitized(peer.serviceName))"])
                call.discovered(.disappeared(name: peer.serviceName))
            case .published(let name):
                logger.info("published on the LAN", metadata: ["name": "\(TerminalText.sanitized(name))"])
            case .daemonUnavailable(let error):
                call.setDiscoveryStatus(.unavailable)
                logger.warning("\(error); peers given with --peer still work, and discovery resumes when avahi-daemon runs")
            case .daemonAvailable:
                call.setDiscoveryStatus(.running)
                logger.info("mDNS discovery is running")
            case .failed(let error):
                logger.warning("mDNS discovery: \(error)")
            }
        }
        if let trusted { lookAgainWhenTrustChanges(call: call, ownKey: ownKey, trusted: trusted, logger: logger) }
    }

    public func stop() {
        stopped.value.store(true, ordering: .relaxed)
        discovery.stop()
    }

    /// When the paired devices change (a pairing or unpairing in another process, as the call's
    /// one watcher of the list reads it), calls the peers found that are paired now and stops
    /// calling those that are not, so that a device paired during the call is called at once.
    private func lookAgainWhenTrustChanges(call: Call, ownKey: DeviceKey?, trusted: TrustedList, logger: Logger) {
        trusted.observe { [discovery, stopped] in
            guard !stopped.value.load(ordering: .relaxed) else { return }
            for peer in discovery.peers where !peer.isPairing {
                guard let address = Self.preferredAddress(of: peer) else { continue }
                if Self.isPaired(peer, ownKey: ownKey, trusted: trusted) {
                    call.discovered(.appeared(name: peer.serviceName, address: address))
                } else {
                    call.discovered(.disappeared(name: peer.serviceName))
                }
            }
            logger.info("paired devices changed; peers found looked at again")
        }
    }

    /// IPv4 where the peer has it (every LAN routes it), else its first address.
    static func preferredAddress(of peer: DiscoveredPeer) -> SocketAddress? {
        peer.addresses.first { $0.family == .ipv4 } ?? peer.addresses.first
    }
}
