import CAvahi

/// Browses for `_intercom._udp` on every interface and IP version, resolves each instance
/// and feeds the results to the peer table. Runs on the discovery thread only.
final class AvahiPeerBrowser {
    private let state: DiscoveryState
    /// Both freed by avahi_client_free with their client.
    private var browser: OpaquePointer?
    private var resolvers: [ServiceInstance: OpaquePointer] = [:]

    /// Drops what the browser before a daemon restart found and this one has not found again.
    private let staleTimer: AvahiTimer
    /// How long after a new browser's first "all for now" the peers it has not found again are
    /// let go: a daemon that has just started says "all for now" when its empty cache is
    /// exhausted, about a second in, before every peer's answer has arrived on a busy host.
    static let staleGraceMilliseconds: UInt32 = 3_000

    init(api: UnsafePointer<AvahiPoll>, state: DiscoveryState) {
        self.state = state
        staleTimer = AvahiTimer(api: api) { state.update { table in table.removeStale() } }
    }

    /// Starts browsing if not browsing yet; call once the client reaches the daemon.
    func start(on client: OpaquePointer) {
        guard browser == nil else { return }
        browser = avahi_service_browser_new(
            client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), ServiceAnnouncement.serviceType, nil, AvahiLookupFlags(0),
            { browser, interface, proto, event, name, _, domain, _, userdata in
                let this = Unmanaged<AvahiPeerBrowser>.fromOpaque(userdata!).takeUnretainedValue()
                this.browserReported(browser!, interface, proto, event, name, domain)
            },
            Unmanaged.passUnretained(self).toOpaque()
        )
        if browser == nil {
            state.report(.failed(.browsingFailed(AvahiError(code: avahi_client_errno(client)))))
        }
    }

    /// Frees the timer while the event loop it belongs to still exists.
    func close() {
        staleTimer.cancel()
    }

    /// The client is gone with its browser and resolvers; what they found is kept, marked
    /// stale, until the next browser confirms or drops it.
    func connectionLost() {
        staleTimer.cancel()
        browser = nil
        resolvers = [:]
        state.update { table in
            table.markAllStale()
            return []
        }
    }

    private func browserReported(
        _ browser: OpaquePointer, _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name else { return }
            let instance = Self.instance(name, interface, proto)
            var admitted = false
            state.update { table in
                admitted = table.instanceFound(instance)
                return []
            }
            if admitted, resolvers[instance] == nil {
                resolve(instance, avahi_service_browser_get_client(browser), proto, domain: domain.map { String(cString: $0) })
            }
        case AVAHI_BROWSER_REMOVE:
            guard let name else { return }
            let instance = Self.instance(name, interface, proto)
            if let resolver = resolvers.removeValue(forKey: instance) {
                avahi_service_resolver_free(resolver)
            }
            state.update { table in table.instanceRemoved(instance).map { [$0] } ?? [] }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            staleTimer.schedule(afterMilliseconds: Self.staleGraceMilliseconds)
        case AVAHI_BROWSER_FAILURE:
            let error = AvahiError(code: avahi_client_errno(avahi_service_browser_get_client(browser)))
            state.report(.failed(.browsingFailed(error)))
        default:
            break
        }
    }

    /// Starts a resolver that stays on the instance and reports again whenever its records
    /// change, until the browser says the instance is gone.
    private func resolve(_ instance: ServiceInstance, _ client: OpaquePointer?, _ proto: AvahiProtocol, domain: String?) {
        // The instance's own IP version for the address: A over IPv4, AAAA over IPv6.
        let resolver = avahi_service_resolver_new(
            client, instance.interfaceIndex, proto, instance.serviceName, ServiceAnnouncement.serviceType, domain, proto, AvahiLookupFlags(0),
            { resolver, interface, proto, event, name, _, domain, hostName, address, port, txt, _, userdata in
                let this = Unmanaged<AvahiPeerBrowser>.fromOpaque(userdata!).takeUnretainedValue()
                this.resolverReported(resolver!, interface, proto, event, name, domain, hostName, address, port, txt)
            },
            Unmanaged.passUnretained(self).toOpaque()
        )
        if let resolver { resolvers[instance] = resolver }
    }

    private func resolverReported(
        _ resolver: OpaquePointer, _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiResolverEvent,
        _ name: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?,
        _ hostName: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
        _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        guard let name else { return }
        let instance = Self.instance(name, interface, proto)
        switch event {
        case AVAHI_RESOLVER_FOUND:
            guard let address, let socketAddress = Self.socketAddress(address.pointee, port: port, interface: interface) else { return }
            let resolution = ServiceResolution(
                hostName: hostName.map { String(cString: $0) } ?? "",
                address: socketAddress,
                txt: TXTRecord.decode(Self.entries(of: txt))
            )
            let now = SystemClock.monotonicNanoseconds()
            state.update { table in table.instanceResolved(instance, resolution, now: now).map { [$0] } ?? [] }
        case AVAHI_RESOLVER_FAILURE:
            // A lost answer makes the resolver time out; while the browser still sees the
            // instance, ask again rather than never learn its address. (The strings the
            // callback got belong to the resolver: copied before it is freed.)
            let client = avahi_service_resolver_get_client(resolver)
            let timedOut = avahi_client_errno(client) == AVAHI_ERR_TIMEOUT
            let domain = domain.map { String(cString: $0) }
            resolvers[instance] = nil
            avahi_service_resolver_free(resolver)
            if timedOut { resolve(instance, client, proto, domain: domain) }
        default:
            break
        }
    }

    private static func instance(_ name: UnsafePointer<CChar>, _ interface: AvahiIfIndex, _ proto: AvahiProtocol) -> ServiceInstance {
        ServiceInstance(serviceName: String(cString: name), interfaceIndex: interface, overIPv6: proto == AVAHI_PROTO_INET6)
    }

    /// The address with the port; an IPv6 link-local address gets the interface as its zone,
    /// without which it cannot be reached.
    private static func socketAddress(_ address: AvahiAddress, port: UInt16, interface: AvahiIfIndex) -> SocketAddress? {
        switch Int(address.proto) {
        case AVAHI_PROTO_INET:
            return SocketAddress(ipv4Bytes: withUnsafeBytes(of: address.data.ipv4.address) { Array($0) }, port: port)
        case AVAHI_PROTO_INET6:
            let bytes = withUnsafeBytes(of: address.data.ipv6.address) { Array($0) }
            let isLinkLocal = bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80
            return SocketAddress(ipv6Bytes: bytes, port: port, scopeID: isLinkLocal ? UInt32(interface) : 0)
        default:
            return nil
        }
    }

    private static func entries(of list: UnsafeMutablePointer<AvahiStringList>?) -> [[UInt8]] {
        var entries: [[UInt8]] = []
        var item = list
        while let current = item {
            entries.append(Array(UnsafeBufferPointer(start: avahi_string_list_get_text(current), count: avahi_string_list_get_size(current))))
            item = avahi_string_list_get_next(current)
        }
        return entries
    }
}
