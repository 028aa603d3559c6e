import IntercomCore

/// One sighting of a service: mDNS reports a service once per interface and IP version.
public struct ServiceInstance: Hashable, Sendable {
    public var serviceName: String
    /// The interface it was seen on (an OS interface index).
    public var interfaceIndex: Int32
    /// Whether it was seen over mDNS on IPv6 rather than IPv4.
    public var overIPv6: Bool
}

/// What resolving one instance gave: where the service runs and its TXT record.
public struct ServiceResolution: Equatable, Sendable {
    public var hostName: String
    /// The address with the service's port.
    public var address: SocketAddress
    public var txt: [String: String]

    public init(hostName: String, address: SocketAddress, txt: [String: String]) {
        self.hostName = hostName
        self.address = address
        self.txt = txt
    }
}

/// The peers on the LAN, built from browse and resolve results, and the events their
/// changes mean. Pure: no I/O, time passed in.
///
/// A service's instances (per interface and IP version) merge into one `DiscoveredPeer`.
/// Our own service is recognised by the `id` in its TXT record, never by its name, and is
/// never reported.
public struct DiscoveredPeerTable: Sendable {
    /// Services whose TXT `id` is this are ours.
    public let ownPeerID: PeerID?
    private var services: [String: Service] = [:]

    private struct Service {
        var instances: [ServiceInstance: Sighting] = [:]
        /// The peer as last reported to the owner; nil while not reported.
        var reported: DiscoveredPeer?
        /// Reported before avahi-daemon went away, and not resolved again since it came back.
        var awaitsConfirmation = false
    }

    private struct Sighting {
        var resolution: ServiceResolution?
        var resolvedAt: UInt64 = 0
        /// Seen before avahi-daemon went away, and not yet seen again since it came back.
        var isStale = false
    }

    public init(ownPeerID: PeerID?) {
        self.ownPeerID = ownPeerID
    }

    /// The peers reported so far and not gone, by service name.
    public var peers: [DiscoveredPeer] {
        services.values.compactMap(\.reported).sorted { $0.serviceName < $1.serviceName }
    }

    /// Services kept at once: anyone on the LAN can announce services, so the table is bounded.
    public static let capacity = 128
    /// Instances of one service (interfaces × IP versions).
    public static let instancesPerService = 8

    /// The browser reported an instance: it is (still) there, not yet resolved. Returns false,
    /// and keeps nothing, when the table is full (the caller then does not resolve it).
    @discardableResult
    public mutating func instanceFound(_ instance: ServiceInstance) -> Bool {
        guard hasRoom(for: instance) else { return false }
        services[instance.serviceName, default: Service()].instances[instance, default: Sighting()].isStale = false
        return true
    }

    private func hasRoom(for instance: ServiceInstance) -> Bool {
        guard let known = services[instance.serviceName] else { return services.count < Self.capacity }
        return known.instances[instance] != nil || known.instances.count < Self.instancesPerService
    }

    /// The resolver reported an instance's host, address and TXT record.
    public mutating func instanceResolved(_ instance: ServiceInstance, _ resolution: ServiceResolution, now: UInt64) -> DiscoveryEvent? {
        guard hasRoom(for: instance) else { return nil }
        services[instance.serviceName, default: Service()].instances[instance] = Sighting(resolution: resolution, resolvedAt: now)
        let event = reconcile(instance.serviceName, now: now)
        guard services[instance.serviceName]?.awaitsConfirmation == true else { return event }
        services[instance.serviceName]?.awaitsConfirmation = false
        return event ?? services[instance.serviceName]?.reported.map(DiscoveryEvent.confirmed)
    }

    /// The browser reported an instance gone (a goodbye, or its records expired).
    public mutating func instanceRemoved(_ instance: ServiceInstance) -> DiscoveryEvent? {
        guard services[instance.serviceName]?.instances.removeValue(forKey: instance) != nil else { return nil }
        return reconcile(instance.serviceName, now: nil)
    }

    /// The connection to avahi-daemon was lost: what we know may be out of date, but is kept
    /// until a new browser has had its chance to report each instance again.
    public mutating func markAllStale() {
        services = services.mapValues { service in
            var service = service
            service.awaitsConfirmation = service.reported != nil
            service.instances = service.instances.mapValues { Sighting(resolution: $0.resolution, resolvedAt: $0.resolvedAt, isStale: true) }
            return service
        }
    }

    /// A new browser has reported everything it is going to for now: instances it did not
    /// report are gone.
    public mutating func removeStale() -> [DiscoveryEvent] {
        var events: [DiscoveryEvent] = []
        for name in services.keys.sorted() {
            let before = services[name]!.instances.count
            services[name]!.instances = services[name]!.instances.filter { !$0.value.isStale }
            if services[name]!.instances.count != before, let event = reconcile(name, now: nil) {
                events.append(event)
            }
        }
        return events
    }

    /// Merges a service's sightings into one peer and says how that differs from what the
    /// owner was last told. `now` is the time of a fresh resolution, nil after a removal.
    private mutating func reconcile(_ name: String, now: UInt64?) -> DiscoveryEvent? {
        guard var service = services[name] else { return nil }
        let previous = service.reported
        let current = merge(name, service.instances, previous: previous, now: now)
        service.reported = current
        services[name] = service.instances.isEmpty ? nil : service

        switch (previous, current) {
        case (nil, let peer?):
            return .appeared(peer)
        case (let peer?, nil):
            return .disappeared(peer)
        case (let old?, let new?) where !old.hasSameContent(as: new):
            return .updated(new)
        default:
            return nil
        }
    }

    private func merge(_ name: String, _ instances: [ServiceInstance: Sighting], previous: DiscoveredPeer?, now: UInt64?) -> DiscoveredPeer? {
        let resolved = instances.values.filter { $0.resolution != nil }
        // The newest resolution speaks for the host and the TXT record.
        guard let newest = resolved.max(by: { $0.resolvedAt < $1.resolvedAt }), let latest = newest.resolution else { return nil }
        if let ownPeerID, latest.txt[ServiceAnnouncement.Key.peerID].flatMap({ PeerID(hexadecimal: $0) }) == ownPeerID {
            return nil
        }
        let addresses = Set(resolved.compactMap { $0.resolution?.address }).sorted(by: Self.addressOrder)
        let seen = now ?? previous?.lastSeenNanoseconds ?? newest.resolvedAt
        return DiscoveredPeer(
            serviceName: name,
            hostName: latest.hostName,
            addresses: addresses,
            txt: latest.txt,
            firstSeenNanoseconds: previous?.firstSeenNanoseconds ?? seen,
            lastSeenNanoseconds: seen
        )
    }

    /// IPv4 before IPv6, then by address bytes: a stable order callers can rely on.
    private static func addressOrder(_ a: SocketAddress, _ b: SocketAddress) -> Bool {
        if a.family != b.family { return a.family == .ipv4 }
        if a.addressBytes != b.addressBytes { return a.addressBytes.lexicographicallyPrecedes(b.addressBytes) }
        return (a.scopeID, a.port) < (b.scopeID, b.port)
    }
}
