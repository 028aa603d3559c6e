import CAvahi

/// Keeps our `_intercom._udp` service registered with avahi-daemon through an entry group,
/// renaming it on collisions. Runs on the discovery thread only.
final class AvahiServicePublisher {
    private let announcement: ServiceAnnouncement
    private let state: DiscoveryState
    /// The name in use: the announcement's, or an alternative after a collision.
    private var name: String
    /// Freed by avahi_client_free with its client.
    private var group: OpaquePointer?
    /// Collisions with other hosts since the service was last established.
    private var networkCollisions = 0

    init(announcement: ServiceAnnouncement, state: DiscoveryState) {
        self.announcement = announcement
        self.state = state
        name = announcement.name
    }

    /// Registers the service if it is not registered; call when the client is running.
    func publish(on client: OpaquePointer) {
        if group == nil {
            group = avahi_entry_group_new(client, { group, groupState, userdata in
                Unmanaged<AvahiServicePublisher>.fromOpaque(userdata!).takeUnretainedValue().groupChanged(group!, groupState)
            }, Unmanaged.passUnretained(self).toOpaque())
            guard group != nil else {
                fail(AvahiError(code: avahi_client_errno(client)))
                return
            }
        }
        if avahi_entry_group_is_empty(group) != 0 {
            register()
        }
    }

    /// Takes the service off the network while the daemon re-registers its host name; the
    /// next `publish` puts it back.
    func withdraw() {
        if let group { avahi_entry_group_reset(group) }
    }

    /// The client is gone, and its entry group with it.
    func connectionLost() {
        group = nil
    }

    private func groupChanged(_ changed: OpaquePointer, _ groupState: AvahiEntryGroupState) {
        switch groupState {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            networkCollisions = 0
            state.report(.published(serviceName: name))
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Another host has the name: the daemon withdrew ours; try the next one. Two
            // hosts probing one name at once can both lose (avahi breaks the tie record by
            // record, and their SRV and TXT records may disagree on who wins), and would
            // then collide on every next name in lockstep: after the first retry, each
            // skips a random number of names.
            networkCollisions += 1
            for _ in 0..<(networkCollisions == 1 ? 1 : Int.random(in: 1...9)) {
                name = Self.alternative(to: name)
            }
            group = changed
            avahi_entry_group_reset(changed)
            register()
        case AVAHI_ENTRY_GROUP_FAILURE:
            fail(AvahiError(code: avahi_client_errno(avahi_entry_group_get_client(changed))))
        default:
            break
        }
    }

    /// Adds the service to the empty group and commits it. A service of the same name
    /// already registered on this host is a collision too: the next name is tried.
    private func register() {
        guard let group else { return }
        var result = add(to: group)
        while result == AVAHI_ERR_COLLISION {
            name = Self.alternative(to: name)
            result = add(to: group)
        }
        if result == 0 { result = avahi_entry_group_commit(group) }
        if result < 0 { fail(AvahiError(code: result)) }
    }

    private func add(to group: OpaquePointer) -> Int32 {
        var txt: UnsafeMutablePointer<AvahiStringList>?
        // avahi_string_list_add prepends: adding in reverse keeps the announced order.
        for entry in announcement.txtEntries.reversed() {
            txt = avahi_string_list_add(txt, entry)
        }
        defer { avahi_string_list_free(txt) }
        let interface = announcement.scope.map { AvahiIfIndex($0.interfaceIndex) } ?? AvahiIfIndex(AVAHI_IF_UNSPEC)
        let proto = announcement.scope.map { AvahiProtocol($0.ipv6 ? AVAHI_PROTO_INET6 : AVAHI_PROTO_INET) } ?? AvahiProtocol(AVAHI_PROTO_UNSPEC)
        return avahi_entry_group_add_service_strlst(
            group, interface, proto, AvahiPublishFlags(0),
            name, ServiceAnnouncement.serviceType, nil, nil, announcement.port, txt
        )
    }

    private func fail(_ error: AvahiError) {
        state.report(.failed(.publishingFailed(serviceName: name, error)))
    }

    /// "name #2" after "name", "name #3" after that: avahi's own renaming rule.
    private static func alternative(to name: String) -> String {
        guard let next = avahi_alternative_service_name(name) else { return name + " #2" }
        defer { avahi_free(next) }
        return String(cString: next)
    }
}
