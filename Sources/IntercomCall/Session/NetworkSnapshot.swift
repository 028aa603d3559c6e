import IntercomCore
import IntercomSecurity
import Synchronization

/// The network side's view of the call, as displays and the stats file show it.
public struct NetworkSnapshot: Sendable {
    var peers: [PeerSnapshot] = []
    var security = SecurityStatistics.unencrypted
    var devicesSeen: Set<DeviceKey> = []
    /// The target in force, and how many peers it reaches now.
    var target = CallTarget.all
    var targetReaches = 0

    /// A copy whose lists have storage of their own, for a reader to keep: the network thread
    /// refills the snapshot's lists in place, and one still shared with a reader's copy would
    /// be copied (allocated) on that thread. Made while the reader holds the lock.
    func detached() -> NetworkSnapshot {
        var copy = self
        copy.peers = peers.map { $0 }
        copy.devicesSeen = Set(devicesSeen.map { $0 })
        return copy
    }

    /// New figures, the peer rows copied into the storage already here.
    mutating func update(_ figures: NetworkFigures) {
        peers.removeAll(keepingCapacity: true)
        peers.append(contentsOf: figures.peers)
        security = figures.security
        devicesSeen = figures.devicesSeen
        target = figures.target
        targetReaches = figures.reaches
    }
}

public struct PeerSnapshot: Sendable, Codable {
    public let address: String
    public let name: String?
    public let origin: String
    public let ssrc: UInt32?
    public let talking: Bool
    public let secondsSinceHeard: Double?
    /// From RTCP: what this peer measured of our stream, and the round trip.
    public let roundTripMilliseconds: Double?
    public let reportedFractionLost: Double?
    public let reportedJitterMilliseconds: Double?
    /// The fingerprint of the device's key, in an encrypted call once its session is up.
    public let fingerprint: String?
    /// How loud a paired device plays here (`intercom volume`, `intercom mute`).
    public let listening: Listening?
    /// The rooms it belongs to, and whom it talks to as far as we are concerned ("to all",
    /// "to kitchen", "to you"), as its hello says (names checked as `GroupName` checks them).
    public let rooms: [String]
    public let to: String

    public struct Listening: Codable, Sendable, Equatable {
        public let volumePercent: Int
        public let muted: Bool
    }
}

/// The network thread's figures, for any thread to read.
final class PublishedNetworkSnapshot: Sendable {
    private let state = Mutex(NetworkSnapshot())

    /// Into the storage the snapshot already has: nothing is allocated once the call runs
    /// (readers take copies of their own, `detached()`). While the call runs the network
    /// thread only tries the lock (false: a reader held it); at the end it `waits`, so that
    /// the last figures are the final ones.
    func publish(_ figures: NetworkFigures, waiting: Bool) -> Bool {
        if waiting {
            state.withLock { $0.update(figures) }
            return true
        }
        return state.withLockIfAvailable { $0.update(figures); return true } ?? false
    }

    /// Reads under the lock: what `body` returns must not share the snapshot's lists
    /// (`NetworkSnapshot.detached`), or the network thread's next refill would copy them.
    func read<Result: Sendable>(_ body: (NetworkSnapshot) -> Result) -> Result {
        state.withLock { body($0) }
    }
}
