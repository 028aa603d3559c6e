import Synchronization

/// Changes to whom the call talks, posted by discovery or a reloaded configuration and taken
/// by the network thread. The network thread is not a real-time thread, so a short lock is
/// fine here, and any number of threads may post.
final class PeerDirectory: Sendable {
    private let pending = Mutex<[PeerDirectoryChange]>([])

    func post(_ change: PeerDirectoryChange) {
        pending.withLock { $0.append(change) }
    }

    func take() -> [PeerDirectoryChange] {
        pending.withLock { changes in
            defer { changes.removeAll() }
            return changes
        }
    }
}
