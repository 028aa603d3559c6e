import IntercomCore
import IntercomIO
import IntercomSecurity
import Logging
import Synchronization

/// The network thread: I/O around the call's `CallSession`. It reads the clocks, datagrams,
/// discovery's changes, the handshake thread's results and our own RTP from the capture
/// thread, hands each to the session, and does what the session says: datagrams to the
/// socket, packets and goodbyes to the playback thread's inbox, handshake work to the
/// handshake thread, the peers' reports to the encoder, the figures to the snapshot.
final class NetworkLoop {
    private let socket: UDPSocket
    private let poller: Poller
    private let outbox: RecyclingRing<[UInt8]>
    private let capture: CaptureStatistics
    private let directory: PeerDirectory
    private var session: CallSession<SocketAddress>
    private var output: Output
    /// The encrypted call's handshake thread; nil in a plain call.
    private let handshakes: HandshakeWorker?
    private var buffer = [UInt8](repeating: 0, count: NetworkLoop.maximumDatagram)
    /// Recent senders' addresses, so that receiving from a known peer allocates nothing: room
    /// for as many as the peer table holds, so that a full call does not evict its own peers.
    private var senders: SenderAddressCache
    var counters: NetworkCounters { session.counters }
    /// The peers and link figures, published for status displays and the stats file.
    let snapshot = PublishedNetworkSnapshot()
    /// A new announcement from the interface, a talk button or a reload (`Call.setTarget`),
    /// made on their thread; the network thread only tries the lock.
    let pendingAnnouncement = Mutex<Announcement?>(nil)

    /// A datagram larger than this is not ours: RTP/Opus packets stay well below a LAN MTU.
    static let maximumDatagram = 1500

    init(
        socket: UDPSocket, poller: Poller, configuration: CallConfiguration, ssrc: UInt32,
        outbox: RecyclingRing<[UInt8]>, inbox: RecyclingRing<ReceivedPacket>, capture: CaptureStatistics,
        linkFeedback: LinkFeedbackChannel, directory: PeerDirectory, logger: Logger
    ) {
        self.socket = socket
        self.poller = poller
        self.outbox = outbox
        self.capture = capture
        self.directory = directory
        let handshakes = configuration.security.map { security in
            HandshakeWorker(store: security.trustedDevices, logger: logger, wakeNetwork: { [poller] in poller.wake() })
        }
        self.handshakes = handshakes
        let security = configuration.security.map { security in
            SessionSecurity<SocketAddress>(
                publicKey: DeviceKey(security.identity.publicKey), privateKey: security.identity.privateKey,
                rekeyInterval: security.rekeyInterval, paired: handshakes?.trustedList.paired ?? [:], host: { $0.host }
            )
        }
        session = CallSession(
            configuration: configuration, ssrc: ssrc, localPort: socket.localPort, staticPeers: configuration.staticPeers, security: security
        )
        senders = SenderAddressCache(capacity: session.peers.capacity)
        output = Output(
            socket: socket, inbox: inbox, linkFeedback: linkFeedback, handshakes: handshakes, snapshot: snapshot, counters: session.counters
        )
    }

    func run(_ loop: LoopTurns) {
        while loop.next() {
            let now = Self.now()
            if let next = pendingAnnouncement.withLockIfAvailable({ $0.take() }) ?? nil {
                session.announce(next, now: now.monotonic)
            }
            session.tick(now: now, sent: sentFigures(), output: &output)
            _ = try? poller.wait(timeoutNanoseconds: session.waitBeforeTick(now: SystemClock.monotonicNanoseconds()))
            for change in directory.take() { session.directoryChanged(change, now: SystemClock.monotonicNanoseconds(), output: &output) }
            collectHandshakes()
            receiveBatch()
            sendQueuedAudio()
        }
        sendQueuedAudio()
        session.leave(now: SystemClock.monotonicNanoseconds(), output: &output)
    }

    private static func now() -> SessionTime {
        SessionTime(monotonic: SystemClock.monotonicNanoseconds(), wall: SystemClock.wallClockNow())
    }

    /// What our sender reports say, as the capture thread counted it.
    private func sentFigures() -> SentFigures {
        SentFigures(
            talking: capture.talking.load(ordering: .relaxed),
            rtpTimestamp: UInt32(truncatingIfNeeded: capture.lastTimestamp.load(ordering: .relaxed)),
            packets: UInt32(truncatingIfNeeded: capture.sentPackets.load(ordering: .relaxed)),
            octets: UInt32(truncatingIfNeeded: capture.sentOctets.load(ordering: .relaxed))
        )
    }

    /// The encrypted channel's helper thread: started with the call, stopped after the goodbye.
    func startHelpers() throws { try handshakes?.start() }
    /// The trusted list changed here (a volume key): read it now. Any thread.
    func trustedListChanged() { handshakes?.readTrustedListNow() }
    /// The paired devices as the call last read them (nil in a plain call).
    var trustedList: TrustedList? { handshakes?.trustedList }
    func stopHelpers() { handshakes?.stop() }

    /// Handshake steps the helper thread finished, and a changed list of paired devices.
    private func collectHandshakes() {
        guard let handshakes else { return }
        while let trusted = handshakes.takeTrustUpdate() { session.trustChanged(trusted) }
        while let result = handshakes.takeResult() {
            session.handshakeFinished(result, now: SystemClock.monotonicNanoseconds(), output: &output)
        }
    }

    /// Most datagrams read in one turn of the loop. A stranger can send faster than the loop
    /// reads: reading until the socket is empty would then hold our own audio in the outbox,
    /// and the session's ticks, for as long as the flood lasts. The rest waits in the socket
    /// (poll is level-triggered: the next turn starts at once). A call's own traffic is a few
    /// datagrams a turn.
    static let datagramsPerTurn = 64

    private func receiveBatch() {
        for _ in 0..<Self.datagramsPerTurn {
            let received: (count: Int, from: SocketAddress)?
            do {
                received = try socket.receive(into: &buffer, senders: &senders)
            } catch .datagramTooLarge {
                counters.tooLarge.wrappingAdd(1, ordering: .relaxed)
                continue
            } catch {
                // A socket error is not the datagram's fault; try again on the next wake-up.
                counters.receiveErrors.wrappingAdd(1, ordering: .relaxed)
                break
            }
            guard let (count, from) = received else { break }
            counters.datagramsReceived.wrappingAdd(1, ordering: .relaxed)
            // Arrivals are stamped as they are read: a late wake-up would pass for network jitter.
            session.received(buffer[0..<count], from: from, now: Self.now(), output: &output)
        }
    }

    private func sendQueuedAudio() {
        while let packet = outbox.pop() {
            session.sendAudio(packet, output: &output)
            outbox.giveBack(consume packet)
        }
    }

    /// What the session does, done with the socket and the rings.
    private struct Output: CallSessionOutput {
        let socket: UDPSocket
        let inbox: RecyclingRing<ReceivedPacket>
        let linkFeedback: LinkFeedbackChannel
        let handshakes: HandshakeWorker?
        let snapshot: PublishedNetworkSnapshot
        let counters: NetworkCounters

        func send(_ datagram: [UInt8], to destination: SocketAddress) {
            do {
                try socket.send(datagram, to: destination)
                counters.datagramsSent.wrappingAdd(1, ordering: .relaxed)
                counters.bytesSent.wrappingAdd(datagram.count, ordering: .relaxed)
            } catch {
                counters.sendErrors.wrappingAdd(1, ordering: .relaxed)
            }
        }

        /// Only the payload is copied, into storage the playback thread gave back.
        func play(_ packet: RTPHeader, payload: ArraySlice<UInt8>, arrival: UInt64, gain: Float?, isPage: Bool) -> Bool {
            var copy = inbox.reusable()?.payload ?? []
            copy.removeAll(keepingCapacity: true)
            copy += payload
            return inbox.push(ReceivedPacket(
                ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                marker: packet.marker, payload: copy, arrivalTime: arrival, gain: gain, isPage: isPage
            ))
        }

        func stopPlaying(_ ssrc: UInt32) -> Bool { inbox.push(.goodbye(ssrc: ssrc)) }

        func perform(_ work: SecureChannel<SocketAddress>.Work) -> Bool { handshakes?.submit(work) ?? false }

        func note(_ notice: SecureChannel<SocketAddress>.VersionNotice) { handshakes?.post(notice) }

        func linkReported(_ feedback: LinkFeedback) { linkFeedback.post(feedback) }

        func publish(_ figures: NetworkFigures, waiting: Bool) -> Bool { snapshot.publish(figures, waiting: waiting) }
    }
}
