import IntercomCore
import Synchronization
import SystemPackage

/// A userspace UDP relay that puts a simulated network between two peers, for tests,
/// benchmarks and `intercom relay`.
///
/// Design: two sockets, one per side. Peer A sends to `sideAAddress`; the relay forwards
/// from its side-B socket to peer B. Peer B sends to `sideBAddress`; the relay forwards
/// from its side-A socket to peer A. Each peer therefore sees the relay as the other
/// peer, and a reply to a datagram's source address goes back through the relay. A peer's
/// address is configured, or learned from the latest datagram on its side's socket; until
/// it is known, datagrams for it are counted as unroutable.
///
/// Each direction has its own `ImpairmentModel`; B→A draws from its profile's seed + 1,
/// so one profile used both ways still gives independent losses.
///
/// One dedicated thread does all the work: it sleeps in `poll` until a socket is readable
/// or the earliest delivery falls due on the monotonic clock, so the sockets, models and
/// queue belong to that thread alone. `stop()` discards datagrams still in flight.
public final class ImpairmentRelay {
    /// Which way datagrams travel: from peer A to peer B, or back.
    public enum Direction: Int, CaseIterable, Sendable {
        case aToB
        case bToA
    }

    /// Who the peers are, how each direction is impaired, and where the relay listens.
    public struct Configuration: Sendable {
        /// Where datagrams for peer A go; nil learns it from traffic.
        public var peerA: SocketAddress?
        /// Where datagrams for peer B go; nil learns it from traffic.
        public var peerB: SocketAddress?
        /// The network from A to B.
        public var aToB: ImpairmentProfile
        /// The network from B to A.
        public var bToA: ImpairmentProfile
        /// Where the side-A socket listens; port 0 lets the kernel pick.
        public var sideABind: SocketAddress
        /// Where the side-B socket listens; port 0 lets the kernel pick.
        public var sideBBind: SocketAddress

        public init(
            peerA: SocketAddress? = nil, peerB: SocketAddress? = nil,
            aToB: ImpairmentProfile = .clean, bToA: ImpairmentProfile = .clean,
            sideABind: SocketAddress = .loopbackIPv4(port: 0), sideBBind: SocketAddress = .loopbackIPv4(port: 0)
        ) {
            self.peerA = peerA
            self.peerB = peerB
            self.aToB = aToB
            self.bToA = bToA
            self.sideABind = sideABind
            self.sideBBind = sideBBind
        }
    }

    /// What happened to the datagrams of one direction.
    public struct Counters: Equatable, Sendable {
        /// Datagrams that arrived at the relay.
        public var received: Int
        /// Datagrams sent on, duplicates included.
        public var forwarded: Int
        /// Datagrams the impairment model lost.
        public var dropped: Int
        /// Datagrams the impairment model delivered twice.
        public var duplicated: Int
        /// Datagrams with nowhere to go: the destination peer was not known yet.
        public var unroutable: Int
        /// Receive or send failures.
        public var socketErrors: Int

        public init(received: Int, forwarded: Int, dropped: Int, duplicated: Int, unroutable: Int, socketErrors: Int) {
            self.received = received
            self.forwarded = forwarded
            self.dropped = dropped
            self.duplicated = duplicated
            self.unroutable = unroutable
            self.socketErrors = socketErrors
        }
    }

    /// The address peer A sends to.
    public let sideAAddress: SocketAddress
    /// The address peer B sends to.
    public let sideBAddress: SocketAddress

    private let counterCells: [CounterCells]
    private let stopRequested = SharedFlag()
    private let poller: Poller
    private let thread: JoinableThread

    /// Binds both sides and starts relaying.
    public init(_ configuration: Configuration) throws(NetworkError) {
        let sockets = [try UDPSocket(boundTo: configuration.sideABind), try UDPSocket(boundTo: configuration.sideBBind)]
        let poller = try Poller(watching: sockets)
        let counterCells = Direction.allCases.map { _ in CounterCells() }
        let loop = RelayLoop(
            sockets: sockets, poller: poller, configuration: configuration,
            counters: counterCells, stopRequested: stopRequested
        )
        self.sideAAddress = sockets[0].localAddress
        self.sideBAddress = sockets[1].localAddress
        self.counterCells = counterCells
        self.poller = poller
        do {
            // The relay stands for a network: a busy host must not add its own stalls to the
            // impairments it was asked for, so it runs at real-time priority where permitted.
            self.thread = try JoinableThread(name: "relay", realtime: true) { loop.run() }
        } catch {
            throw .systemCall(operation: "pthread_create", errno: Errno(rawValue: error.code))
        }
    }

    deinit {
        stop()
    }

    /// A snapshot of one direction's counters.
    public func counters(_ direction: Direction) -> Counters {
        counterCells[direction.rawValue].snapshot
    }

    /// Stops relaying and waits for the relay thread to end. Later calls do nothing.
    public func stop() {
        stopRequested.value.store(true, ordering: .releasing)
        poller.wake()
        thread.join()
    }
}

/// The counters of one direction, written by the relay thread and read by anyone.
private final class CounterCells: Sendable {
    let received = Atomic(0)
    let forwarded = Atomic(0)
    let dropped = Atomic(0)
    let duplicated = Atomic(0)
    let unroutable = Atomic(0)
    let socketErrors = Atomic(0)

    var snapshot: ImpairmentRelay.Counters {
        ImpairmentRelay.Counters(
            received: received.load(ordering: .relaxed), forwarded: forwarded.load(ordering: .relaxed),
            dropped: dropped.load(ordering: .relaxed), duplicated: duplicated.load(ordering: .relaxed),
            unroutable: unroutable.load(ordering: .relaxed), socketErrors: socketErrors.load(ordering: .relaxed)
        )
    }
}

/// The relay thread's state and work. Side 0 is A, side 1 is B; datagrams arriving on a
/// side travel in the direction with the same index and leave through the other side.
private final class RelayLoop {
    private let sockets: [UDPSocket]
    private let poller: Poller
    private let counters: [CounterCells]
    private let stopRequested: SharedFlag
    private let peerIsConfigured: [Bool]
    private var peers: [SocketAddress?]
    private var models: [ImpairmentModel]
    private var queue = DeliveryQueue()
    private let clockOrigin = ContinuousClock.now
    /// Room for the largest UDP datagram.
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    /// Receives per socket per wakeup, so a flood on one side cannot starve deliveries.
    private static let receiveBatchLimit = 64

    init(
        sockets: [UDPSocket], poller: Poller, configuration: ImpairmentRelay.Configuration,
        counters: [CounterCells], stopRequested: SharedFlag
    ) {
        self.sockets = sockets
        self.poller = poller
        self.counters = counters
        self.stopRequested = stopRequested
        self.peers = [configuration.peerA, configuration.peerB]
        self.peerIsConfigured = peers.map { $0 != nil }
        self.models = [
            ImpairmentModel(profile: configuration.aToB),
            ImpairmentModel(profile: configuration.bToA, seed: configuration.bToA.seed &+ 1),
        ]
    }

    func run() {
        while !stopRequested.value.load(ordering: .acquiring) {
            deliverDue()
            let now = elapsedNanoseconds()
            let timeout = queue.earliestTime.map { $0 > now ? $0 - now : 0 }
            guard let result = try? poller.wait(timeoutNanoseconds: timeout) else {
                // poll fails only on programming errors (EFAULT, EINVAL) or ENOMEM;
                // stopping beats spinning.
                return
            }
            for side in sockets.indices where result.isReadable(side) {
                receiveBatch(onSide: side)
            }
        }
    }

    private func receiveBatch(onSide side: Int) {
        let direction = ImpairmentRelay.Direction.allCases[side]
        let cells = counters[side]
        for _ in 0..<Self.receiveBatchLimit {
            let received: (count: Int, from: SocketAddress)?
            do {
                received = try sockets[side].receive(into: &buffer)
            } catch {
                cells.socketErrors.wrappingAdd(1, ordering: .relaxed)
                continue
            }
            guard let received else { return }
            if !peerIsConfigured[side] { peers[side] = received.from }
            cells.received.wrappingAdd(1, ordering: .relaxed)
            let deliveryTimes = models[side].schedule(packetSentAt: elapsedNanoseconds())
            if deliveryTimes.isEmpty { cells.dropped.wrappingAdd(1, ordering: .relaxed) }
            if deliveryTimes.count > 1 { cells.duplicated.wrappingAdd(1, ordering: .relaxed) }
            let bytes = Array(buffer[..<received.count])
            for time in deliveryTimes {
                queue.insert(time: time, direction: direction, bytes: bytes)
            }
        }
    }

    private func deliverDue() {
        let now = elapsedNanoseconds()
        while let delivery = queue.popDue(at: now) {
            let source = delivery.direction.rawValue
            let destination = 1 - source
            let cells = counters[source]
            guard let peer = peers[destination] else {
                cells.unroutable.wrappingAdd(1, ordering: .relaxed)
                continue
            }
            do {
                try sockets[destination].send(delivery.bytes, to: peer)
                cells.forwarded.wrappingAdd(1, ordering: .relaxed)
            } catch {
                cells.socketErrors.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }

    private func elapsedNanoseconds() -> UInt64 {
        MediaTime.nanoseconds(ContinuousClock.now - clockOrigin)
    }
}
