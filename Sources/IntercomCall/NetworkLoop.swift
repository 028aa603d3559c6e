import IntercomCore
import IntercomIO
import IntercomSecurity
import Logging
import Synchronization

/// The network thread: reads datagrams and sorts them (RTP to the playback thread's inbox,
/// RTCP to the peer table and reception statistics), sends queued RTP to every peer, and
/// sends each peer RTCP reports and hellos once per interval; BYE when it stops. In an
/// encrypted call every datagram passes through `CallEncryption` first: only authenticated
/// packets reach the sorting, and nothing is sent to a peer without a session.
final class NetworkLoop {
    private let socket: UDPSocket
    private let poller: Poller
    private let configuration: CallConfiguration
    private let ssrc: UInt32
    private let outbox: RecyclingRing<[UInt8]>
    private let inbox: RecyclingRing<ReceivedPacket>
    private let capture: CaptureCounters
    private let directory: PeerDirectory
    /// Discovered peers by service name, to find them again when they leave.
    private var discoveredAddresses: [String: SocketAddress] = [:]
    let counters = NetworkCounters()
    /// The peers and link figures, published for status displays and the stats file.
    let snapshot = Mutex(NetworkSnapshot())

    private var peers: PeerTable<SocketAddress>
    /// Stream owners of a plain call, per peer's address (`owner(of:)`): kept while the
    /// address is in the peer table, so never more than it holds.
    private var plainOwners: [SocketAddress: [UInt8]] = [:]
    /// The sources we hear, each owned by the peer that sends it (its device key when
    /// encrypted, else its address): bounded, and emptied as peers leave.
    private var sources = SourceTable<[UInt8]>()
    private var roundTrips: [SocketAddress: UInt64] = [:]
    private var remoteReports: [SocketAddress: ReportBlock] = [:]
    private var sentSinceLastReport = false
    private var lastSentPackets = 0
    private var buffer = [UInt8](repeating: 0, count: NetworkLoop.maximumDatagram)
    /// Recent senders' addresses, so that receiving from a known peer allocates nothing: room
    /// for as many as the peer table holds, so that a full call does not evict its own peers.
    private var senders: SenderAddressCache
    /// The datagram being sealed, kept from packet to packet so that sealing allocates nothing.
    private var sealed: [UInt8] = []
    private let encryption: CallEncryption?
    /// The device keys we had a session with during the call (for `paired`'s last seen).
    private var devicesSeen: Set<[UInt8]> = []
    /// The published peer rows, and the address and name each was made for.
    private var rows: [PeerSnapshot] = []
    private var rowAddresses: [SocketAddress] = []
    private var rowNames: [String?] = []
    /// The rooms and target each row was made for, as the peer's hello sent them.
    private var rowRooms: [[UInt8]] = []
    private var rowTargets: [(kind: UInt8, room: [UInt8])] = []
    /// Peers' key fingerprints as shown, made once per key (hashing and formatting allocate).
    private var fingerprints: [[UInt8]: String] = [:]
    private var nextSessionUpkeep: UInt64 = 0
    /// A report's blocks and the datagram it goes out in, kept between reports.
    private var reportBlocks: [ReportBlock] = []
    private var compound: [UInt8] = []
    /// `reportTail` for each state of the talk flag and each kind of target a receiver is
    /// told (`HeardTarget`: all, a room, you), made when first needed.
    private var reportTails: [[UInt8]?]
    /// The peers we call, listed for each upkeep into storage kept between them.
    private var wanted: [SocketAddress] = []
    /// Whom we talk to, made ready to compare with what peers send without allocating, and
    /// the rooms we belong to, told in every hello.
    private var announcement: Announcement
    /// A new announcement from the interface, a talk button or a reload (`Call.setTarget`),
    /// made on their thread; the network thread only tries the lock.
    let pendingAnnouncement = Mutex<Announcement?>(nil)
    /// When reports were last brought forward for a peer's changed rooms.
    private var lastPromptReport: UInt64 = 0
    private var nextPublish: UInt64 = 0
    /// How stale the published peers and link figures may be between reports: displays
    /// refresh a few times a second, and building the rows on every packet costs allocations.
    private static let publishInterval = MediaTime.nanoseconds(.milliseconds(100))

    /// A datagram larger than this is not ours: RTP/Opus packets stay well below a LAN MTU.
    static let maximumDatagram = 1500

    init(
        socket: UDPSocket, poller: Poller, configuration: CallConfiguration, ssrc: UInt32,
        outbox: RecyclingRing<[UInt8]>, inbox: RecyclingRing<ReceivedPacket>, capture: CaptureCounters,
        directory: PeerDirectory, logger: Logger
    ) {
        self.directory = directory
        self.socket = socket
        self.poller = poller
        self.configuration = configuration
        self.ssrc = ssrc
        self.outbox = outbox
        self.inbox = inbox
        self.capture = capture
        peers = PeerTable(keepaliveTimeout: MediaTime.nanoseconds(configuration.keepaliveTimeout))
        senders = SenderAddressCache(capacity: peers.capacity)
        encryption = configuration.security.map { CallEncryption($0, logger: logger, wakeNetwork: { [poller] in poller.wake() }) }
        for address in configuration.staticPeers { peers.add(address, origin: .configured) }
        announcement = Announcement(target: configuration.target, rooms: configuration.rooms)
        reportTails = Array(repeating: nil, count: 2 * 3)
    }

    /// When the next reports go out (monotonic ns): every report interval, and sooner once a
    /// new stream is heard (`firstReportDelay`).
    private var nextReport: UInt64 = 0
    /// How soon after a new stream's first packets its sender gets a report: it takes the link
    /// for clean until a first report says otherwise (`CodecModeController`), so a troubled
    /// link would otherwise go without forward error correction for up to a whole report
    /// interval. A quarter of a second of packets (some 25 before DTX sets in) is enough to
    /// see loss or jitter.
    static let firstReportDelay = MediaTime.nanoseconds(.milliseconds(250))

    func run(_ loop: LoopTurns) {
        nextReport = SystemClock.monotonicNanoseconds()
        let reportInterval = MediaTime.nanoseconds(configuration.reportInterval)
        while loop.next() {
            let now = SystemClock.monotonicNanoseconds()
            if now >= nextReport {
                for peer in peers.expire(now: now) { forgetPeer(at: peer.address) }
                for source in sources.expire(now: now) { stopPlaying(source) }
                sendReports(now: now)
                nextReport = now + reportInterval
            }
            maintainSessions(now: now)
            applyTargetChanges(now: now)
            _ = try? poller.wait(timeoutNanoseconds: min(nextReport - min(now, nextReport), 100_000_000))
            applyDirectoryChanges()
            collectHandshakes()
            receiveAll()
            sendQueuedAudio()
        }
        sendQueuedAudio()
        sendGoodbye()
        publish(waiting: true)
    }

    // MARK: Discovery

    private func applyDirectoryChanges() {
        let now = SystemClock.monotonicNanoseconds()
        for change in directory.take() {
            switch change {
            case .configured(let address):
                peers.add(address, origin: .configured, now: now)
            case .appeared(let name, let address):
                if let previous = discoveredAddresses[name], previous != address { stopCalling(previous) }
                discoveredAddresses[name] = address
                peers.add(address, origin: .discovered, now: now)
                peers.update(address) { if $0.name == nil { $0.name = name } }
            case .disappeared(let name):
                guard let address = discoveredAddresses.removeValue(forKey: name) else { continue }
                stopCalling(address)
            }
        }
    }

    /// Discovery says a peer left, or moved to another address. mDNS is not authenticated:
    /// anyone can send a goodbye or a new SRV record for a peer's service. So where the peer has
    /// a session, this only stops calling it there: the peer stays as one that reached us, and
    /// its session stays until it falls silent (the keepalive timeout), says goodbye in an
    /// authenticated BYE, or moves with an authenticated packet (roaming). Without a session
    /// (or encryption) there is nothing better to go by, and the peer leaves at once.
    private func stopCalling(_ address: SocketAddress) {
        guard let encryption, encryption.channel.canSend(to: address) else { return leave(address) }
        peers.update(address) { $0.origin = .learned }
    }

    /// Notes a peer heard from; a learned one the table pushed out for it is forgotten.
    private func admit(_ address: SocketAddress, now: UInt64) -> Bool {
        let admitted = peers.heard(from: address, now: now)
        for gone in peers.takeEvicted() { forgetPeer(at: gone) }
        return admitted
    }

    /// A peer said goodbye (BYE, or its mDNS service left): its session and reports go with it.
    private func leave(_ address: SocketAddress) {
        peers.saidGoodbye(address)
        if peers.peers[address] == nil { forgetPeer(at: address) }
    }

    /// A peer left the table: nothing it told us may outlive it (its loss reports would pin FEC).
    private func forgetPeer(at address: SocketAddress) {
        encryption?.forget(address)
        remoteReports[address] = nil
        roundTrips[address] = nil
        if encryption == nil {
            for source in sources.forget(owner: owner(of: address)) { stopPlaying(source) }
            plainOwners[address] = nil
        }
        updateReportedLoss()
    }

    /// Who owns the streams of a datagram: its sender's device key in an encrypted call (which
    /// only an authenticated packet may move to a new address), else its address, as bytes
    /// made once per peer and kept until it leaves (`plainOwners`): made per datagram, the
    /// address's text and its bytes were three allocations a packet on the network thread. A
    /// stranger's are made afresh: strangers cannot fill the table and push a peer's out.
    private func owner(of address: SocketAddress) -> [UInt8] {
        if let owner = plainOwners[address] { return owner }
        let owner = Array(address.description.utf8)
        if peers.peers[address] != nil { plainOwners[address] = owner }
        return owner
    }

    // MARK: Sessions

    /// The encrypted channel's helper thread: started with the call, stopped after the goodbye.
    func startHelpers() throws { try encryption?.start() }
    /// The trusted list changed here (a volume key): read it now. Any thread.
    func trustedListChanged() { encryption?.readTrustedListNow() }
    func stopHelpers() { encryption?.stop() }

    /// Handshake steps the helper thread finished, and a changed list of paired devices.
    private func collectHandshakes() {
        guard let encryption else { return }
        for (datagram, destination) in encryption.collect(now: SystemClock.monotonicNanoseconds()) {
            sendRaw(datagram, to: destination)
        }
    }

    /// Starts, repeats and renews handshakes with the peers we call (named or discovered);
    /// learned peers reached us with a handshake of their own.
    private func maintainSessions(now: UInt64) {
        guard let encryption, now >= nextSessionUpkeep else { return }
        nextSessionUpkeep = now + 100_000_000
        wanted.removeAll(keepingCapacity: true)
        for peer in peers.peers.values where peer.origin != .learned { wanted.append(peer.address) }
        for (datagram, destination) in encryption.maintain(wanted: wanted, now: now) {
            sendRaw(datagram, to: destination)
        }
    }

    // MARK: Receiving

    private func receiveAll() {
        while true {
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
            let now = SystemClock.monotonicNanoseconds()
            handle(buffer[0..<count], from: from, now: now)
        }
        let now = SystemClock.monotonicNanoseconds()
        if now >= nextPublish { publish() }
    }

    private func handle(_ bytes: ArraySlice<UInt8>, from address: SocketAddress, now: UInt64) {
        guard let encryption else {
            if SecureDatagram.isSecure(bytes) {
                counters.malformed.wrappingAdd(1, ordering: .relaxed)
            } else {
                sort(bytes, from: address, owner: owner(of: address), now: now)
            }
            return
        }
        guard SecureDatagram.isSecure(bytes) else {
            encryption.refuseUnencrypted()
            return
        }
        switch encryption.receive(bytes, from: address, now: now) {
        case .plaintext(_, let plaintext, let key):
            sort(plaintext[...], from: address, owner: key, now: now)
        case .handshake(let reply):
            if let reply { sendRaw(reply, to: address) }
        case .dropped:
            break
        }
    }

    /// An RTP or RTCP datagram, authenticated if the call is encrypted (told apart as
    /// `Datagram.classify` does).
    private func sort(_ bytes: ArraySlice<UInt8>, from address: SocketAddress, owner: [UInt8], now: UInt64) {
        guard bytes.count >= 2 else {
            counters.malformed.wrappingAdd(1, ordering: .relaxed)
            return
        }
        if Datagram.isRTP(bytes) {
            // Read where it lies: only the payload is copied, into storage the playback thread gave back.
            do {
                let header = try RTPPacket.parseHeader(bytes)
                handleRTP(header, payload: bytes.dropFirst(header.payload.lowerBound).prefix(header.payload.count),
                          from: address, owner: owner, now: now)
            } catch {
                if case .wrongVersion = error { counters.wrongVersion.wrappingAdd(1, ordering: .relaxed) }
                else { counters.malformed.wrappingAdd(1, ordering: .relaxed) }
            }
            return
        }
        do {
            handleRTCP(try RTCPCompound(validating: bytes), from: address, owner: owner, now: now)
        } catch {
            if case .wrongVersion = error { counters.wrongVersion.wrappingAdd(1, ordering: .relaxed) }
            else { counters.malformed.wrappingAdd(1, ordering: .relaxed) }
        }
    }

    private func handleRTP(_ packet: RTPHeader, payload: ArraySlice<UInt8>, from address: SocketAddress, owner: [UInt8], now: UInt64) {
        let isPage = packet.payloadType == configuration.pagePayloadType
        guard packet.payloadType == configuration.payloadType || isPage, !payload.isEmpty else {
            counters.wrongPayloadType.wrappingAdd(1, ordering: .relaxed)
            return
        }
        guard !isPage || !configuration.refusesPages else {
            counters.pagesRefused.wrappingAdd(1, ordering: .relaxed)
            return
        }
        guard packet.ssrc != ssrc else {
            counters.ownPackets.wrappingAdd(1, ordering: .relaxed)
            return
        }
        // Only a stream whose sequence numbers follow on (RFC 3550's probation) is played:
        // random datagrams that happen to parse as RTP never are.
        // Peers we called (and, encrypted, every authenticated one) keep room reserved: a crowd
        // of strangers' streams cannot keep them out.
        let reserved = encryption != nil || peers.peers[address].map { $0.origin != .learned } ?? false
        let outcome = sources.record(
            ssrc: packet.ssrc, owner: owner, reserved: reserved, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp, now: now
        )
        for evicted in sources.takeEvicted() { stopPlaying(evicted) }
        switch outcome {
        case .recorded(validated: true):
            break
        case .recorded(validated: false), .full:
            counters.unvalidated.wrappingAdd(1, ordering: .relaxed)
            return
        case .ownedByAnother:
            counters.foreignSSRC.wrappingAdd(1, ordering: .relaxed)
            return
        }
        // A stranger that sends a valid stream is a peer that was given our address: answer it.
        guard admit(address, now: now) else {
            counters.refusedPeer.wrappingAdd(1, ordering: .relaxed)
            return
        }
        counters.rtpReceived.wrappingAdd(1, ordering: .relaxed)
        if peers.peers[address]?.ssrc != packet.ssrc { nextReport = min(nextReport, now + Self.firstReportDelay) }
        peers.update(address) { $0.ssrc = packet.ssrc }
        var copy = inbox.reusable()?.payload ?? []
        copy.removeAll(keepingCapacity: true)
        copy += payload
        // A paired device plays as loud as it is remembered to (owner is its key), from its
        // first packet on; a page at its volume even where it is muted.
        let received = ReceivedPacket(
            ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
            marker: packet.marker, payload: copy, arrivalTime: now, gain: encryption?.listeningGain(of: owner, page: isPage), isPage: isPage
        )
        if !inbox.push(received) { counters.inboxFull.wrappingAdd(1, ordering: .relaxed) }
    }

    /// Read where it lies: a peer's report, description and hello each second allocate
    /// nothing unless a name changed.
    private func handleRTCP(_ packets: RTCPCompound, from address: SocketAddress, owner: [UInt8], now: UInt64) {
        // In plain RTP, reports alone never make a stranger a peer (we would answer it with a
        // stream); in an encrypted call they come from an authenticated session.
        guard encryption != nil || peers.peers[address] != nil, admit(address, now: now) else {
            counters.refusedPeer.wrappingAdd(1, ordering: .relaxed)
            return
        }
        counters.rtcpReceived.wrappingAdd(1, ordering: .relaxed)
        let arrival = NTPTimestamp(unixNanoseconds: SystemClock.realtimeNanoseconds())
        for packet in packets {
            switch packet {
            case .senderReport(let sender, let blocks):
                sources.noteSenderReport(ssrc: sender.ssrc, owner: owner, ReceivedSenderReport(ntpTimestamp: sender.ntpTimestamp, arrivalNanoseconds: now))
                noteReports(blocks, from: address, arrival: arrival)
            case .receiverReport(_, let blocks):
                noteReports(blocks, from: address, arrival: arrival)
            case .sourceDescription(let chunks):
                for chunk in chunks {
                    for item in chunk {
                        if item.isCanonicalName { peers.update(address) { Self.store(item.value, in: &$0.canonicalName) } }
                        if item.isName { peers.update(address) { Self.store(item.value, in: &$0.name) } }
                    }
                }
            case .goodbye(let goodbyeSources, _):
                // Only a source's owner can say goodbye for it.
                var left = false
                for source in goodbyeSources where sources.forget(ssrc: source, owner: owner) || peers.peers[address]?.ssrc == source {
                    stopPlaying(source)
                    left = true
                }
                if left { leave(address) }
            case .application(let subtype, _, let name, let data):
                guard name == PeerHello.applicationName else { continue }
                do {
                    guard subtype == PeerHello.subtype else { throw PeerHelloParseError.notPeerHello(name: name, subtype: subtype) }
                    let hello = try PeerHelloView(data: data)
                    // A peer whose rooms changed may have entered or left our target: it is told at once.
                    // (At most four times a second: a peer that changed rooms at every hello could
                    // otherwise draw a report from us for each one.)
                    if let known = peers.peers[address]?.rooms, !known.elementsEqual(hello.roomsBytes) {
                        nextReport = min(nextReport, max(now, lastPromptReport + Self.firstReportDelay))
                        lastPromptReport = nextReport
                    }
                    peers.update(address) {
                        Self.store(hello.displayNameBytes, in: &$0.name)
                        $0.protocolVersion = Int(PeerHello.currentVersion)
                        $0.talking = hello.isTalking
                        Self.store(hello.roomsBytes, in: &$0.rooms)
                        $0.heardTargetKind = hello.targetKind
                        Self.store(hello.targetRoomBytes, in: &$0.heardTargetRoom)
                    }
                } catch {
                    counters.unsupportedHello.wrappingAdd(1, ordering: .relaxed)
                }
            case .unknown:
                break
            }
        }
    }

    /// Bytes as sent, copied only when they differ from those kept.
    private static func store(_ bytes: ArraySlice<UInt8>, in kept: inout [UInt8]) {
        if !kept.elementsEqual(bytes) { kept = Array(bytes) }
    }

    /// A name as sent, made a string only when it differs from the one kept (compared as
    /// decoded, so a name that is not UTF-8 is not made again at every report).
    private static func store(_ bytes: ArraySlice<UInt8>, in text: inout String?) {
        if let text, bytes.decodes(to: text) { return }
        text = String(decoding: bytes, as: UTF8.self)
    }

    private func noteReports(_ blocks: RTCPReportBlocks, from address: SocketAddress, arrival: NTPTimestamp) {
        guard let block = blocks.first(where: { $0.ssrc == ssrc }) else { return }
        remoteReports[address] = block
        updateReportedLoss()
        if let roundTrip = block.roundTripNanoseconds(arrivedAt: arrival) { roundTrips[address] = roundTrip }
    }

    /// The encoder protects against the worst link among the peers still in the call.
    private func updateReportedLoss() {
        let worst = remoteReports.values.lazy.map { Int($0.fractionLost) * 1000 / 256 }.max() ?? 0
        capture.reportedLossPermille.store(worst, ordering: .relaxed)
        let worstJitter = remoteReports.values.lazy.map { Int(MediaTime.nanoseconds(samples: Int64($0.jitter)) / 1000) }.max() ?? 0
        capture.reportedJitterMicroseconds.store(worstJitter, ordering: .relaxed)
        // Counted after the figures are stored: the capture thread reads them when it sees the
        // count change (also when a peer left and took its report along).
        capture.lossReports.wrappingAdd(1, ordering: .releasing)
    }

    /// A source left (BYE, silence, its peer gone): the playback thread stops playing it at once.
    private func stopPlaying(_ source: UInt32) {
        if !inbox.push(.goodbye(ssrc: source)) { counters.inboxFull.wrappingAdd(1, ordering: .relaxed) }
    }

    // MARK: Sending

    private func sendQueuedAudio() {
        while let packet = outbox.pop() {
            sentSinceLastReport = true
            // The table's own keys: a list of them would be allocated for every packet. Only
            // the target's devices get the audio: the others' machines never see it.
            for destination in peers.peers.keys where heardTarget(by: destination) != nil { send(packet, kind: .rtp, to: destination) }
            outbox.giveBack(consume packet)
        }
    }

    /// A report, our source description and a hello, in one compound datagram to each peer:
    /// written into storage kept between reports, the description and the hello made once for
    /// each state of the talk flag, so that a report allocates nothing.
    private func sendReports(now: UInt64) {
        sources.makeReportBlocks(now: now, into: &reportBlocks)
        if reportBlocks.count > 31 { reportBlocks.removeLast(reportBlocks.count - 31) }
        let report: RTCPPacket
        if sentSinceLastReport {
            report = .senderReport(RTCPSenderReport(
                ssrc: ssrc,
                ntpTimestamp: NTPTimestamp(unixNanoseconds: SystemClock.realtimeNanoseconds()),
                rtpTimestamp: UInt32(truncatingIfNeeded: capture.lastTimestamp.load(ordering: .relaxed)),
                packetCount: UInt32(truncatingIfNeeded: capture.sentPackets.load(ordering: .relaxed)),
                octetCount: UInt32(truncatingIfNeeded: capture.sentOctets.load(ordering: .relaxed)),
                reportBlocks: reportBlocks
            ))
        } else {
            report = .receiverReport(RTCPReceiverReport(ssrc: ssrc, reportBlocks: reportBlocks))
        }
        sentSinceLastReport = false
        compound.removeAll(keepingCapacity: true)
        report.append(to: &compound)
        let reportLength = compound.count
        let talking = capture.talking.load(ordering: .relaxed)
        for destination in peers.peers.keys {
            // Each peer is told whether we talk to it, and to whom as far as it is concerned.
            let heard = heardTarget(by: destination)
            compound.removeLast(compound.count - reportLength)
            compound += reportTail(talking: talking && heard != nil, target: heard ?? 0)
            send(compound, kind: .rtcp, to: destination)
        }
        publish()
    }

    /// Our source description and hello, as they follow every report.
    private func reportTail(talking: Bool, target kind: UInt8) -> [UInt8] {
        let slot = Int(kind) * 2 + (talking ? 1 : 0)
        if let made = reportTails[slot] { return made }
        let heard: HeardTarget = switch (kind, announcement.target.target) {
        case (1, .room(let room)): .room(room)
        case (2, _): .you
        default: .all
        }
        let hello = PeerHello(
            isTalking: talking, listeningPort: socket.localPort,
            peerID: configuration.peerID, displayName: String(configuration.name.utf8.prefix(PeerHello.maximumDisplayNameByteCount)) ?? "",
            rooms: announcement.rooms, target: heard
        )
        let tail = RTCPPacket.serializeCompound([
            .sourceDescription([SDESChunk(ssrc: ssrc, items: [.canonicalName(configuration.peerID.description), .name(configuration.name)])]),
            .application(hello.applicationPacket(ssrc: ssrc)),
        ])
        reportTails[slot] = tail
        return tail
    }

    // MARK: Targets

    /// A new target or new rooms: the hellos that say so go out at once.
    private func applyTargetChanges(now: UInt64) {
        guard let next = pendingAnnouncement.withLockIfAvailable({ $0.take() }) ?? nil else { return }
        announcement = next
        for index in reportTails.indices { reportTails[index] = nil }
        nextReport = now
    }

    /// Whether the peer at `address` is in our target, and what it is told (`HeardTarget` on
    /// the wire: 0 all, 1 a room, 2 you); nil when it is not. Allocates nothing.
    private func heardTarget(by address: SocketAddress) -> UInt8? {
        let target = announcement.target
        switch target.target {
        case .all:
            return 0
        case .room:
            guard let peer = peers.peers[address], target.isRoomNamed(in: peer.rooms) else { return nil }
            return 1
        case .device:
            let key = encryption?.channel.remoteStaticKey(of: address)
            if let key, key != configuration.security?.identity.publicKey {
                // A paired device: by the name it was paired under, or its key's fingerprint.
                if let name = encryption?.paired[key]?.name, target.isDeviceNamed(name) { return 2 }
                return target.isFingerprint(fingerprint(of: key)) ? 2 : nil
            }
            // Our own identity's processes, and peers of a plain call: by the name they give.
            guard let name = peers.peers[address]?.name, target.isDeviceNamed(name) else { return nil }
            return 2
        }
    }

    private func sendGoodbye() {
        let compound = RTCPPacket.serializeCompound([
            .receiverReport(RTCPReceiverReport(ssrc: ssrc)),
            .goodbye(RTCPGoodbye(sources: [ssrc], reason: "leaving")),
        ])
        for destination in peers.addresses { send(compound, kind: .rtcp, to: destination) }
    }

    /// Sends an RTP or RTCP packet, sealed for the peer's session in an encrypted call (and
    /// not at all while it has none).
    private func send(_ bytes: [UInt8], kind: SecureDatagram.TransportKind, to destination: SocketAddress) {
        guard let encryption else { return sendRaw(bytes, to: destination) }
        guard encryption.seal(bytes, kind: kind, to: destination, into: &sealed) else {
            if kind == .rtp { counters.unsentNoSession.wrappingAdd(1, ordering: .relaxed) }
            return
        }
        sendRaw(sealed, to: destination)
    }

    private func sendRaw(_ bytes: [UInt8], to destination: SocketAddress) {
        do {
            try socket.send(bytes, to: destination)
            counters.datagramsSent.wrappingAdd(1, ordering: .relaxed)
            counters.bytesSent.wrappingAdd(bytes.count, ordering: .relaxed)
        } catch {
            counters.sendErrors.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Publishes the peers and link figures for displays and the stats file. While the call
    /// runs it only tries the lock (a reader holding it means another try on the next turn);
    /// at the end it `waits`, so that the last figures are the final ones.
    private func publish(waiting: Bool = false) {
        let now = SystemClock.monotonicNanoseconds()
        nextPublish = now + Self.publishInterval
        updateRows(now: now)
        let security = encryption?.statistics ?? .unencrypted
        // Into the storage the snapshot already has: nothing is allocated once the call runs
        // (readers take copies of their own, `detached()`).
        let (rows, seen) = (rows, devicesSeen)
        var reached = 0
        for address in peers.peers.keys where heardTarget(by: address) != nil { reached += 1 }
        let target = announcement.target.target
        if waiting {
            snapshot.withLock { $0.update(peers: rows, security: security, devicesSeen: seen, target: target, reaches: reached) }
        } else if snapshot.withLockIfAvailable({ $0.update(peers: rows, security: security, devicesSeen: seen, target: target, reaches: reached); return true }) == nil {
            nextPublish = 0
        }
    }

    /// One row per peer, in the order of their addresses' text. The rows, and the strings in
    /// them, are made again only when the peers or their names change; otherwise only their
    /// figures are, in place, so that publishing allocates nothing.
    private func updateRows(now: UInt64) {
        let table = peers.peers
        let unchanged = rows.count == table.count && rowAddresses.indices.allSatisfy { index in
            table[rowAddresses[index]].map {
                $0.name == rowNames[index] && $0.rooms == rowRooms[index]
                    && $0.heardTargetKind == rowTargets[index].kind && $0.heardTargetRoom == rowTargets[index].room
            } ?? false
        }
        if !unchanged {
            let sorted = table.values.sorted { $0.address.description < $1.address.description }
            rowAddresses = sorted.map(\.address)
            rowNames = sorted.map(\.name)
            rowRooms = sorted.map(\.rooms)
            rowTargets = sorted.map { ($0.heardTargetKind, $0.heardTargetRoom) }
            rows = sorted.map { peer in
                PeerSnapshot(
                    address: peer.address.description, name: peer.name.map { TerminalText.sanitized($0) },
                    origin: peer.origin.rawValue, ssrc: nil, talking: false, secondsSinceHeard: nil, roundTripMilliseconds: nil,
                    reportedFractionLost: nil, reportedJitterMilliseconds: nil, fingerprint: nil, listening: nil,
                    rooms: PeerHelloView.rooms(in: peer.rooms[...]).map { TerminalText.sanitized($0.text) },
                    to: TerminalText.sanitized(PeerHelloView.target(kind: peer.heardTargetKind, room: peer.heardTargetRoom[...]).description)
                )
            }
        }
        for index in rows.indices {
            guard let peer = table[rowAddresses[index]] else { continue }
            let key = encryption?.channel.remoteStaticKey(of: peer.address)
            if let key { devicesSeen.insert(key) }
            let row = rows[index]
            // A paired device is shown by the name it was stored under at pairing, not by the
            // one its hello or discovery says (the peer's to choose); our own processes by theirs.
            let name = key.flatMap { encryption?.paired[$0]?.name } ?? row.name
            rows[index] = PeerSnapshot(
                address: row.address, name: name, origin: peer.origin.rawValue, ssrc: peer.ssrc, talking: peer.talking,
                secondsSinceHeard: peer.lastHeard.map { MediaTime.seconds(nanoseconds: Double(now - min(now, $0))) },
                roundTripMilliseconds: roundTrips[peer.address].map { MediaTime.milliseconds(nanoseconds: Double($0)) },
                reportedFractionLost: remoteReports[peer.address].map { Double($0.fractionLost) / 256 },
                reportedJitterMilliseconds: remoteReports[peer.address].map { MediaTime.milliseconds(samples: Double($0.jitter)) },
                fingerprint: key.map(fingerprint(of:)), listening: key.flatMap { encryption?.paired[$0]?.listening }.map { .init(volumePercent: $0.volumePercent, muted: $0.muted) },
                rooms: row.rooms, to: row.to
            )
        }
    }

    private func fingerprint(of key: [UInt8]) -> String {
        if let known = fingerprints[key] { return known }
        // Only authenticated keys get here, but a long call may meet many: keep the cache small.
        if fingerprints.count >= 64 { fingerprints.removeAll() }
        let made = Fingerprint(publicKey: key).description
        fingerprints[key] = made
        return made
    }
}

/// A change in the peers that discovery sees, handed to the network thread.
public enum PeerDirectoryChange: Sendable {
    /// The user named this peer (a reloaded configuration).
    case configured(SocketAddress)
    /// A peer's service (by name) resolved to this address.
    case appeared(name: String, address: SocketAddress)
    /// The service said goodbye or vanished from the LAN.
    case disappeared(name: String)
}

/// The network side's view of the call, as displays and the stats file show it.
public struct NetworkSnapshot: Sendable {
    var peers: [PeerSnapshot] = []
    var security = SecurityStatistics.unencrypted
    var devicesSeen: Set<[UInt8]> = []
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
    mutating func update(peers rows: [PeerSnapshot], security: SecurityStatistics, devicesSeen seen: Set<[UInt8]>, target: CallTarget, reaches reached: Int) {
        peers.removeAll(keepingCapacity: true)
        peers.append(contentsOf: rows)
        self.security = security
        devicesSeen = seen
        self.target = target
        targetReaches = reached
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

/// Whom a call talks to and the rooms it belongs to, as its hellos tell its peers.
struct Announcement: Sendable {
    let target: TargetMatcher
    let rooms: [GroupName]

    init(target: CallTarget, rooms: [GroupName]) {
        self.target = TargetMatcher(target)
        self.rooms = rooms
    }
}

/// A target made ready for the network thread to compare, packet by packet, with what it
/// knows of each peer, without allocating: the room's name as bytes, a fingerprint as
/// lowercase hexadecimal digits.
struct TargetMatcher: Sendable {
    let target: CallTarget
    private let roomBytes: [UInt8]
    private let fingerprintDigits: [UInt8]?

    init(_ target: CallTarget) {
        self.target = target
        switch target {
        case .all:
            roomBytes = []
            fingerprintDigits = nil
        case .room(let room):
            roomBytes = Array(room.text.utf8)
            fingerprintDigits = nil
        case .device(let device):
            roomBytes = []
            let digits = Array(device.text.lowercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: ":") })
            let hexadecimal = digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
            fingerprintDigits = digits.count >= 8 && hexadecimal ? digits : nil
        }
    }

    /// Whether a hello's rooms (`PeerHelloView.roomsBytes`) name the target's room.
    func isRoomNamed(in rooms: [UInt8]) -> Bool {
        !roomBytes.isEmpty && PeerHelloView.firstRoom(in: rooms[...]) { $0.elementsEqual(roomBytes) }
    }

    func isDeviceNamed(_ name: String) -> Bool {
        if case .device(let device) = target { return device.text == name }
        return false
    }

    /// Whether a fingerprint as shown (`3f2a-91c0-77de-0b41`) is the target's.
    func isFingerprint(_ shown: String) -> Bool {
        guard let fingerprintDigits else { return false }
        return shown.utf8.lazy.filter { $0 != UInt8(ascii: "-") }.elementsEqual(fingerprintDigits)
    }
}
