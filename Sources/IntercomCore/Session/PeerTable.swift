/// The peers of a call and how each is known: named on the command line (static, kept for
/// the whole call) or learned because it reached us first (dropped when it falls silent).
public struct PeerTable<Address: Hashable & Sendable>: Sendable {
    public enum Origin: String, Sendable, Codable {
        case configured, learned, discovered
    }

    public struct Peer: Sendable {
        public let address: Address
        public var origin: Origin
        public var name: String?
        public var canonicalName: String?
        public var ssrc: UInt32?
        public var protocolVersion: Int?
        public var lastHeard: UInt64?
        public var talking = false
        /// The rooms its hello names, as on the wire (`PeerHelloView.roomsBytes`), and whom it
        /// talks to as far as we are concerned (`PeerHelloView.targetKind`, `targetRoomBytes`).
        public var rooms: [UInt8] = []
        public var heardTargetKind: UInt8 = 0
        public var heardTargetRoom: [UInt8] = []
        /// When the peer entered the table (monotonic ns): a discovered peer that never
        /// answers is dropped a keepalive timeout after this.
        public var added: UInt64 = 0
    }

    /// How long a learned peer may stay silent before it is dropped.
    public let keepaliveTimeout: UInt64
    /// Bounds the table so that a flood of strangers cannot grow it without end (see `heard`).
    public let capacity: Int
    public private(set) var peers: [Address: Peer] = [:]
    /// Learned peers pushed out by newcomers, for the owner to forget what it kept of them.
    private var evicted: [Address] = []

    public init(keepaliveTimeout: UInt64 = MediaTime.nanoseconds(.seconds(5)), capacity: Int = 32) {
        self.keepaliveTimeout = keepaliveTimeout
        self.capacity = capacity
    }

    public var addresses: [Address] { Array(peers.keys) }

    /// Adds a peer to call; an address already known keeps its state, but a peer that was
    /// only learned from its packets takes the origin that names it (so that discovery's
    /// goodbye, or the configuration, governs it from then on).
    public mutating func add(_ address: Address, origin: Origin, now: UInt64 = 0) {
        if peers[address]?.origin == .learned, origin != .learned {
            peers[address]!.origin = origin
            return
        }
        guard peers[address] == nil, peers.count < capacity else { return }
        peers[address] = Peer(address: address, origin: origin, added: now)
    }

    /// Records that `address` was heard from at `now`, learning it when it is new.
    /// Returns false when the table is full and the stranger was not admitted.
    /// When the table is full, a newcomer takes the place of the learned peer heard from least
    /// recently, if that one has been silent this long: strangers who fill the table cannot keep
    /// a real peer out for good, and a peer that talks is never pushed out by them.
    public static var evictableSilence: UInt64 { MediaTime.nanoseconds(.seconds(1)) }

    @discardableResult
    public mutating func heard(from address: Address, now: UInt64) -> Bool {
        if peers[address] == nil {
            if peers.count >= capacity {
                let learned = peers.values.filter { $0.origin == .learned }
                guard let quietest = learned.min(by: { ($0.lastHeard ?? $0.added) < ($1.lastHeard ?? $1.added) }),
                      now - min(now, quietest.lastHeard ?? quietest.added) >= Self.evictableSilence
                else { return false }
                peers[quietest.address] = nil
                evicted.append(quietest.address)
            }
            peers[address] = Peer(address: address, origin: .learned, added: now)
        }
        peers[address]!.lastHeard = now
        return true
    }

    /// The learned peers pushed out since the last call.
    public mutating func takeEvicted() -> [Address] {
        defer { evicted.removeAll() }
        return evicted
    }

    public mutating func update(_ address: Address, _ change: (inout Peer) -> Void) {
        guard peers[address] != nil else { return }
        change(&peers[address]!)
    }

    /// A peer said goodbye: a learned or discovered one leaves; a configured one is kept
    /// (it may come back) but forgets its stream.
    public mutating func saidGoodbye(_ address: Address) {
        guard let peer = peers[address] else { return }
        if peer.origin == .configured {
            peers[address]!.ssrc = nil
            peers[address]!.talking = false
        } else {
            peers[address] = nil
        }
    }

    /// Drops learned and discovered peers not heard from within the keepalive timeout (a
    /// peer that died without a word); returns them. Configured peers stay.
    public mutating func expire(now: UInt64) -> [Peer] {
        let silent = peers.values.filter { peer in
            let since = max(peer.lastHeard ?? 0, peer.added)
            return peer.origin != .configured && now > since && now - since > keepaliveTimeout
        }
        for peer in silent { peers[peer.address] = nil }
        return silent
    }
}
