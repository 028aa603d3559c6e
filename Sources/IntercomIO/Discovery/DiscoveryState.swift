import Synchronization

/// What the discovery thread shares with the owner's threads: the peer table, the time the
/// first peer appeared, and the owner's event handler.
final class DiscoveryState: Sendable {
    let startedAtNanoseconds: UInt64
    private let table: Mutex<DiscoveredPeerTable>
    private let firstPeerAtNanoseconds = Mutex<UInt64?>(nil)
    private let handler: ServiceDiscovery.EventHandler

    init(table: DiscoveredPeerTable, startedAtNanoseconds: UInt64, handler: @escaping ServiceDiscovery.EventHandler) {
        self.table = Mutex(table)
        self.startedAtNanoseconds = startedAtNanoseconds
        self.handler = handler
    }

    var peers: [DiscoveredPeer] { table.withLock { $0.peers } }

    var firstPeerAt: UInt64? { firstPeerAtNanoseconds.withLock { $0 } }

    /// Changes the table under its lock, then reports the events the change produced,
    /// outside the lock so the handler may read `peers`.
    func update(_ change: (inout DiscoveredPeerTable) -> [DiscoveryEvent]) {
        let events = table.withLock { change(&$0) }
        events.forEach(report)
    }

    /// Hands one event to the owner.
    func report(_ event: DiscoveryEvent) {
        if case .appeared(let peer) = event {
            firstPeerAtNanoseconds.withLock { $0 = $0 ?? peer.firstSeenNanoseconds }
        }
        handler(event)
    }
}
