import IntercomIO
import Synchronization

/// Changes to whom the call talks, posted by any thread (discovery, a reloaded configuration)
/// and taken by the real-time network thread between its waits. The network thread never waits
/// for the lock: when a poster holds it, the changes are taken on its next turn (within 100 ms).
final class PeerDirectory: Sendable {
    private let pending = Mutex<[PeerDirectoryChange<SocketAddress>]>([])

    func post(_ change: PeerDirectoryChange<SocketAddress>) {
        pending.withLock { $0.append(change) }
    }

    /// The changes posted since the last take, or none while a poster holds the lock.
    func take() -> [PeerDirectoryChange<SocketAddress>] {
        pending.withLockIfAvailable { changes in
            defer { changes.removeAll() }
            return changes
        } ?? []
    }
}
