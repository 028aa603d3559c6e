import IntercomCore
@testable import IntercomIO
import Testing

@Suite("Discovery: the peer table")
struct DiscoveryPeerTableTests {
    private let ownID = PeerID(bytes: Array(repeating: 0xAA, count: 16))!
    private let otherID = PeerID(bytes: Array(repeating: 0xBB, count: 16))!

    private func instance(_ name: String, ipv6: Bool = false) -> ServiceInstance {
        ServiceInstance(serviceName: name, interfaceIndex: 2, overIPv6: ipv6)
    }

    private func resolution(_ id: PeerID, ipv6: Bool = false, port: UInt16 = 5004, ptime: String = "10") -> ServiceResolution {
        let address = ipv6
            ? SocketAddress(ipv6Bytes: [0xFE, 0x80] + Array(repeating: 0, count: 13) + [1], port: port, scopeID: 2)!
            : SocketAddress(ipv4Bytes: [10, 77, 0, 2], port: port)!
        return ServiceResolution(hostName: "h2.local", address: address, txt: ["v": "1", "id": id.description, "ptime": ptime])
    }

    @Test func peerAppearsUpdatesAndDisappears() throws {
        var table = DiscoveredPeerTable(ownPeerID: ownID)
        table.instanceFound(instance("bob"))
        #expect(table.peers.isEmpty, "a peer is reported only once resolved")

        let appeared = table.instanceResolved(instance("bob"), resolution(otherID), now: 100)
        guard case .appeared(let peer) = appeared else { Issue.record("expected appeared, got \(String(describing: appeared))"); return }
        #expect(peer.serviceName == "bob" && peer.peerID == otherID && peer.protocolVersion == 1)
        #expect(peer.addresses == [SocketAddress(ipv4Bytes: [10, 77, 0, 2], port: 5004)!])
        #expect(peer.firstSeenNanoseconds == 100 && peer.lastSeenNanoseconds == 100)

        // The same records again change nothing the owner needs to hear, but count as seen.
        #expect(table.instanceResolved(instance("bob"), resolution(otherID), now: 200) == nil)
        #expect(table.peers.first?.lastSeenNanoseconds == 200)

        let updated = table.instanceResolved(instance("bob"), resolution(otherID, ptime: "20"), now: 300)
        guard case .updated(let changed) = updated else { Issue.record("expected updated"); return }
        #expect(changed.txt["ptime"] == "20" && changed.firstSeenNanoseconds == 100)

        guard case .disappeared(let gone) = table.instanceRemoved(instance("bob")) else { Issue.record("expected disappeared"); return }
        #expect(gone.serviceName == "bob" && gone.peerID == otherID)
        #expect(table.peers.isEmpty)
        #expect(table.instanceRemoved(instance("bob")) == nil)
    }

    @Test func ipv4AndIPv6SightingsMergeIntoOnePeer() {
        var table = DiscoveredPeerTable(ownPeerID: nil)
        _ = table.instanceResolved(instance("bob", ipv6: true), resolution(otherID, ipv6: true), now: 1)
        let merged = table.instanceResolved(instance("bob"), resolution(otherID), now: 2)
        guard case .updated(let peer) = merged else { Issue.record("expected updated"); return }
        #expect(peer.addresses.map(\.family) == [.ipv4, .ipv6], "IPv4 first")
        #expect(peer.addresses.last?.scopeID == 2)

        // Losing one IP version leaves the peer with the other.
        guard case .updated(let left) = table.instanceRemoved(instance("bob", ipv6: true)) else { Issue.record("expected updated"); return }
        #expect(left.addresses.map(\.family) == [.ipv4])
        #expect(table.peers.count == 1)
    }

    @Test func ownServiceIsRecognisedByIDNotByName() {
        var table = DiscoveredPeerTable(ownPeerID: ownID)
        // Our own service, even renamed after a collision, is never reported…
        #expect(table.instanceResolved(instance("alice #2"), resolution(ownID), now: 1) == nil)
        #expect(table.instanceRemoved(instance("alice #2")) == nil)
        // …while another peer that happens to use our name is.
        #expect(table.instanceResolved(instance("alice"), resolution(otherID), now: 2).map { if case .appeared = $0 { true } else { false } } == true)
        #expect(table.peers.map(\.serviceName) == ["alice"])
    }

    @Test func browseOnlyTableReportsEverything() {
        var table = DiscoveredPeerTable(ownPeerID: nil)
        _ = table.instanceResolved(instance("alice"), resolution(ownID), now: 1)
        _ = table.instanceResolved(instance("bob"), resolution(otherID), now: 1)
        #expect(table.peers.map(\.serviceName) == ["alice", "bob"])
    }

    @Test func afterADaemonRestartOnlyPeersNotFoundAgainDisappear() {
        var table = DiscoveredPeerTable(ownPeerID: ownID)
        _ = table.instanceResolved(instance("bob"), resolution(otherID), now: 1)
        _ = table.instanceResolved(instance("carol"), resolution(PeerID(bytes: Array(repeating: 0xCC, count: 16))!), now: 1)

        table.markAllStale()
        #expect(table.peers.count == 2, "kept while the daemon is away")
        table.instanceFound(instance("bob"))
        let events = table.removeStale()
        #expect(events.count == 1)
        guard case .disappeared(let gone)? = events.first else { Issue.record("expected disappeared"); return }
        #expect(gone.serviceName == "carol")
        #expect(table.peers.map(\.serviceName) == ["bob"])
        #expect(table.removeStale().isEmpty)

        // Resolved again as it was: confirmed once (discovery works again), then quiet.
        guard case .confirmed(let back)? = table.instanceResolved(instance("bob"), resolution(otherID), now: 5) else {
            Issue.record("expected confirmed"); return
        }
        #expect(back.serviceName == "bob" && back.firstSeenNanoseconds == 1 && back.lastSeenNanoseconds == 5)
        #expect(table.instanceResolved(instance("bob"), resolution(otherID), now: 6) == nil)
        // A peer that changed while the daemon was away is updated, not confirmed.
        table.markAllStale()
        table.instanceFound(instance("bob"))
        guard case .updated(let changed)? = table.instanceResolved(instance("bob"), resolution(otherID, ptime: "20"), now: 7) else {
            Issue.record("expected updated"); return
        }
        #expect(changed.txt["ptime"] == "20")
        #expect(table.instanceResolved(instance("bob"), resolution(otherID, ptime: "20"), now: 8) == nil)
    }

    @Test func aFloodOfAnnouncedServicesIsBounded() {
        var table = DiscoveredPeerTable(ownPeerID: nil)
        for index in 0..<1_000 {
            let admitted = table.instanceFound(instance("spam-\(index)"))
            #expect(admitted == (index < DiscoveredPeerTable.capacity))
            _ = table.instanceResolved(instance("spam-\(index)"), resolution(otherID), now: UInt64(index))
        }
        #expect(table.peers.count == DiscoveredPeerTable.capacity)
        // A service already known still updates.
        #expect(table.instanceResolved(instance("spam-0"), resolution(otherID, ptime: "20"), now: 2_000) != nil)
    }
}
