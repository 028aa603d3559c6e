/// What discovery tells its owner, on the discovery thread.
public enum DiscoveryEvent: Equatable, Sendable {
    /// A peer's service was resolved for the first time.
    case appeared(DiscoveredPeer)
    /// A known peer's addresses, host or TXT record changed.
    case updated(DiscoveredPeer)
    /// A peer known before avahi-daemon went away was resolved again, as it was, once the
    /// daemon answered: discovery works again and the peer never left.
    case confirmed(DiscoveredPeer)
    /// A peer's service was withdrawn (an mDNS goodbye, or its records expired), or it was
    /// not found again after avahi-daemon came back. Carries the last thing known of it.
    case disappeared(DiscoveredPeer)
    /// Our service is on the LAN under this name (after any collision renaming).
    case published(serviceName: String)
    /// avahi-daemon cannot be reached; reported once per outage. Discovery keeps trying,
    /// and keeps the peers it knew until the daemon answers again.
    case daemonUnavailable(DiscoveryError)
    /// avahi-daemon answers (at start, or again after an outage).
    case daemonAvailable
    /// Publishing or browsing failed while the daemon runs.
    case failed(DiscoveryError)
}
