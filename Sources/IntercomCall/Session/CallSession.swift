import IntercomCore
import IntercomSecurity

/// The call's decisions, with no I/O and no clock of its own: who is a peer, which datagrams
/// are played, when reports, hellos and handshakes go out and to whom, what the peers'
/// reports change, and what displays are shown. Events come in as calls (a datagram, a
/// directory change, a finished handshake step, a new trusted list, a new target, a packet
/// of our own audio, a tick), each stamped with the time; actions go out through a
/// `CallSessionOutput`. `NetworkLoop` runs it on the network thread around a socket;
/// tests run several on one virtual clock over a simulated network.
///
/// In an encrypted call (`security`) every datagram is opened first: only authenticated
/// packets reach the sorting, and nothing is sent to a peer without a session. Nothing here
/// allocates once the call runs, unless a peer or a name changes.
struct CallSession<Address: Hashable & Sendable & CustomStringConvertible> {
    private let configuration: CallConfiguration
    let ssrc: UInt32
    /// The port our hellos say we listen on.
    private let localPort: UInt16
    let counters: NetworkCounters
    private(set) var security: SessionSecurity<Address>?
    private(set) var peers: PeerTable<Address>
    /// Discovered peers by service name, to find them again when they leave.
    private var discoveredAddresses: [String: Address] = [:]
    /// The sources we hear, each owned by the peer that sends it: bounded, and emptied as peers leave.
    private var sources = SourceTable<StreamOwner<Address>>()
    private var roundTrips: [Address: UInt64] = [:]
    /// The last report each peer sent of our stream, and when it came.
    private var remoteReports: [Address: (block: ReportBlock, at: UInt64)] = [:]
    private var sentSinceLastReport = false
    /// The listeners the encoder was last told of (`LinkFeedback.listeners`).
    private var reportedListeners = 0
    /// The datagram being sealed, kept from packet to packet so that sealing allocates nothing.
    private var sealed: [UInt8] = []
    /// The device keys we had a session with during the call (for `paired`'s last seen).
    private var devicesSeen: Set<DeviceKey> = []
    private var rows = PeerRows<Address>()
    private var nextSessionUpkeep: UInt64 = 0
    /// A report's blocks and the datagram it goes out in, kept between reports.
    private var reportBlocks: [ReportBlock] = []
    private var compound: [UInt8] = []
    /// `reportTail` for each state of the talk flag and each kind of target a receiver is
    /// told (`HeardTarget`: all, a room, you), made when first needed.
    private var reportTails: [[UInt8]?] = Array(repeating: nil, count: 2 * 3)
    /// The peers we call, listed for each upkeep into storage kept between them.
    private var wanted: [Address] = []
    /// Whom we talk to, made ready to compare with what peers send without allocating, and
    /// the rooms we belong to, told in every hello.
    private(set) var announcement: Announcement
    /// When reports were last brought forward for a peer's changed rooms.
    private var lastPromptReport: UInt64 = 0
    /// When the next reports go out (monotonic ns): every report interval, and sooner once a
    /// new stream is heard (`firstReportDelay`) or our target changed.
    private var nextReport: UInt64 = 0
    private var nextPublish: UInt64 = 0

    /// How stale the published peers and link figures may be between reports: displays
    /// refresh a few times a second, and building the rows on every packet costs allocations.
    static var publishInterval: UInt64 { MediaTime.nanoseconds(.milliseconds(100)) }
    /// How often handshakes with the peers we call are started, repeated and renewed.
    static var sessionUpkeepInterval: UInt64 { MediaTime.nanoseconds(.milliseconds(100)) }
    /// The longest a runner waits between ticks.
    static var longestWait: UInt64 { MediaTime.nanoseconds(.milliseconds(100)) }
    /// How soon after a new stream's first packets its sender gets a report: it takes the link
    /// for clean until a first report says otherwise (`CodecModeController`), so a troubled
    /// link would otherwise go without forward error correction for up to a whole report
    /// interval. A quarter of a second of packets (some 25 before DTX sets in) is enough to
    /// see loss or jitter.
    static var firstReportDelay: UInt64 { MediaTime.nanoseconds(.milliseconds(250)) }

    init(
        configuration: CallConfiguration, ssrc: UInt32, localPort: UInt16, staticPeers: [Address],
        security: SessionSecurity<Address>?, counters: NetworkCounters = NetworkCounters()
    ) {
        self.configuration = configuration
        self.ssrc = ssrc
        self.localPort = localPort
        self.security = security
        self.counters = counters
        peers = PeerTable(keepaliveTimeout: MediaTime.nanoseconds(configuration.keepaliveTimeout))
        for address in staticPeers { peers.add(address, origin: .configured) }
        announcement = Announcement(target: configuration.target, rooms: configuration.rooms)
    }

    // MARK: Time

    /// Expires silent peers and sources, sends the reports when they are due, keeps the
    /// sessions with the peers we call, and publishes the figures when they are due.
    mutating func tick<Output: CallSessionOutput>(now: SessionTime, sent: SentFigures, output: inout Output) where Output.Address == Address {
        if now.monotonic >= nextReport {
            for peer in peers.expire(now: now.monotonic) { forgetPeer(at: peer.address, output: &output) }
            for source in sources.expire(now: now.monotonic) { stopPlaying(source, output: &output) }
            forgetStaleReports(now: now.monotonic, output: &output)
            sendReports(now: now, sent: sent, output: &output)
            nextReport = now.monotonic + MediaTime.nanoseconds(configuration.reportInterval)
        }
        maintainSessions(now: now.monotonic, output: &output)
        if now.monotonic >= nextPublish { publish(now: now.monotonic, waiting: false, output: &output) }
    }

    /// How long the runner may wait for datagrams before the next tick is due.
    func waitBeforeTick(now: UInt64) -> UInt64 {
        min(nextReport - min(now, nextReport), Self.longestWait)
    }

    // MARK: Discovery and control

    mutating func directoryChanged<Output: CallSessionOutput>(
        _ change: PeerDirectoryChange<Address>, now: UInt64, output: inout Output
    ) where Output.Address == Address {
        switch change {
        case .configured(let address):
            peers.add(address, origin: .configured, now: now)
        case .appeared(let name, let address):
            if let previous = discoveredAddresses[name], previous != address { stopCalling(previous, output: &output) }
            discoveredAddresses[name] = address
            peers.add(address, origin: .discovered, now: now)
            peers.update(address) { if $0.name == nil { $0.name = name } }
        case .disappeared(let name):
            guard let address = discoveredAddresses.removeValue(forKey: name) else { return }
            stopCalling(address, output: &output)
        }
    }

    /// A new target or new rooms: the hellos that say so go out at the next tick.
    mutating func announce(_ next: Announcement, now: UInt64) {
        announcement = next
        for index in reportTails.indices { reportTails[index] = nil }
        nextReport = now
    }

    /// The paired devices changed (a `pair`, an `unpair`, a volume key).
    mutating func trustChanged(_ paired: [DeviceKey: TrustedPeer]) {
        security?.trustChanged(paired)
    }

    /// A handshake step done by `CallSessionOutput.perform`'s worker.
    mutating func handshakeFinished<Output: CallSessionOutput>(
        _ result: SecureChannel<Address>.WorkResult, now: UInt64, output: inout Output
    ) where Output.Address == Address {
        security?.apply(result, now: now, output: &output)
    }

    /// Discovery says a peer left, or moved to another address. mDNS is not authenticated:
    /// anyone can send a goodbye or a new SRV record for a peer's service. So where the peer has
    /// a session, this only stops calling it there: the peer stays as one that reached us, and
    /// its session stays until it falls silent (the keepalive timeout), says goodbye in an
    /// authenticated BYE, or moves with an authenticated packet (roaming). Without a session
    /// (or encryption) there is nothing better to go by, and the peer leaves at once.
    private mutating func stopCalling<Output: CallSessionOutput>(_ address: Address, output: inout Output) where Output.Address == Address {
        guard security?.canSend(to: address) == true else { return leave(address, output: &output) }
        peers.update(address) { $0.origin = .learned }
    }

    /// Notes a peer heard from; a learned one the table pushed out for it is forgotten.
    private mutating func admit<Output: CallSessionOutput>(_ address: Address, now: UInt64, output: inout Output) -> Bool where Output.Address == Address {
        let admitted = peers.heard(from: address, now: now)
        for gone in peers.takeEvicted() { forgetPeer(at: gone, output: &output) }
        return admitted
    }

    /// A peer said goodbye (BYE, or its mDNS service left): its session and reports go with it.
    private mutating func leave<Output: CallSessionOutput>(_ address: Address, output: inout Output) where Output.Address == Address {
        peers.saidGoodbye(address)
        if peers.peers[address] == nil { forgetPeer(at: address, output: &output) }
    }

    /// A peer left the table: nothing it told us may outlive it (its loss reports would pin FEC).
    private mutating func forgetPeer<Output: CallSessionOutput>(at address: Address, output: inout Output) where Output.Address == Address {
        security?.forget(address)
        remoteReports[address] = nil
        roundTrips[address] = nil
        if security == nil {
            for source in sources.forget(owner: .address(address)) { stopPlaying(source, output: &output) }
        }
        reportLinks(output: &output)
    }

    /// Starts, repeats and renews handshakes with the peers we call (named or discovered);
    /// learned peers reached us with a handshake of their own.
    private mutating func maintainSessions<Output: CallSessionOutput>(now: UInt64, output: inout Output) where Output.Address == Address {
        guard security != nil, now >= nextSessionUpkeep else { return }
        nextSessionUpkeep = now + Self.sessionUpkeepInterval
        wanted.removeAll(keepingCapacity: true)
        for peer in peers.peers.values where peer.origin != .learned { wanted.append(peer.address) }
        security?.maintain(wanted: wanted, now: now, output: &output)
    }

    // MARK: Receiving

    /// A datagram from the network, read where it lies.
    mutating func received<Output: CallSessionOutput>(
        _ bytes: ArraySlice<UInt8>, from address: Address, now: SessionTime, output: inout Output
    ) where Output.Address == Address {
        guard security != nil else {
            if SecureDatagram.isSecure(bytes) {
                counters.malformed.wrappingAdd(1, ordering: .relaxed)
            } else {
                sort(bytes, from: address, owner: .address(address), now: now, output: &output)
            }
            return
        }
        guard SecureDatagram.isSecure(bytes) else {
            security?.refuseUnencrypted()
            return
        }
        switch security?.receive(bytes, from: address, now: now.monotonic, output: &output) {
        case .plaintext(_, let plaintext, let key):
            sort(plaintext[...], from: address, owner: .device(DeviceKey(key)), now: now, output: &output)
        case .handshake(let reply):
            if let reply { output.send(reply, to: address) }
        case .dropped, nil:
            break
        }
    }

    /// An RTP or RTCP datagram, authenticated if the call is encrypted (told apart as
    /// `Datagram.classify` does).
    private mutating func sort<Output: CallSessionOutput>(
        _ bytes: ArraySlice<UInt8>, from address: Address, owner: StreamOwner<Address>, now: SessionTime, output: inout Output
    ) where Output.Address == Address {
        guard bytes.count >= 2 else {
            counters.malformed.wrappingAdd(1, ordering: .relaxed)
            return
        }
        if Datagram.isRTP(bytes) {
            do {
                let header = try RTPPacket.parseHeader(bytes)
                handleRTP(header, payload: bytes.dropFirst(header.payload.lowerBound).prefix(header.payload.count),
                          from: address, owner: owner, now: now.monotonic, output: &output)
            } catch {
                if case .wrongVersion = error { counters.wrongVersion.wrappingAdd(1, ordering: .relaxed) }
                else { counters.malformed.wrappingAdd(1, ordering: .relaxed) }
            }
            return
        }
        do {
            handleRTCP(try RTCPCompound(validating: bytes), from: address, owner: owner, now: now, output: &output)
        } catch {
            if case .wrongVersion = error { counters.wrongVersion.wrappingAdd(1, ordering: .relaxed) }
            else { counters.malformed.wrappingAdd(1, ordering: .relaxed) }
        }
    }

    private mutating func handleRTP<Output: CallSessionOutput>(
        _ packet: RTPHeader, payload: ArraySlice<UInt8>, from address: Address, owner: StreamOwner<Address>, now: UInt64, output: inout Output
    ) where Output.Address == Address {
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
        let reserved = security != nil || peers.peers[address].map { $0.origin != .learned } ?? false
        let outcome = sources.record(
            ssrc: packet.ssrc, owner: owner, reserved: reserved, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp, now: now
        )
        for evicted in sources.takeEvicted() { stopPlaying(evicted, output: &output) }
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
        guard admit(address, now: now, output: &output) else {
            counters.refusedPeer.wrappingAdd(1, ordering: .relaxed)
            return
        }
        counters.rtpReceived.wrappingAdd(1, ordering: .relaxed)
        if peers.peers[address]?.ssrc != packet.ssrc { nextReport = min(nextReport, now + Self.firstReportDelay) }
        peers.update(address) { $0.ssrc = packet.ssrc }
        // A paired device plays as loud as it is remembered to, from its first packet on; a
        // page at its volume even where it is muted.
        let gain = owner.deviceKey.flatMap { security?.listeningGain(of: $0, page: isPage) }
        if !output.play(packet, payload: payload, arrival: now, gain: gain, isPage: isPage) {
            counters.inboxFull.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Read where it lies: a peer's report, description and hello each second allocate
    /// nothing unless a name changed.
    private mutating func handleRTCP<Output: CallSessionOutput>(
        _ packets: RTCPCompound, from address: Address, owner: StreamOwner<Address>, now: SessionTime, output: inout Output
    ) where Output.Address == Address {
        // In plain RTP, reports alone never make a stranger a peer (we would answer it with a
        // stream); in an encrypted call they come from an authenticated session.
        guard security != nil || peers.peers[address] != nil, admit(address, now: now.monotonic, output: &output) else {
            counters.refusedPeer.wrappingAdd(1, ordering: .relaxed)
            return
        }
        counters.rtcpReceived.wrappingAdd(1, ordering: .relaxed)
        let arrival = NTPTimestamp(unixNanoseconds: now.wall.nanosecondsSince1970)
        for packet in packets {
            switch packet {
            case .senderReport(let sender, let blocks):
                sources.noteSenderReport(ssrc: sender.ssrc, owner: owner, ntpTimestamp: sender.ntpTimestamp, arrivalNanoseconds: now.monotonic)
                noteReports(blocks, from: address, arrival: arrival, now: now.monotonic, output: &output)
            case .receiverReport(_, let blocks):
                noteReports(blocks, from: address, arrival: arrival, now: now.monotonic, output: &output)
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
                    stopPlaying(source, output: &output)
                    left = true
                }
                if left { leave(address, output: &output) }
            case .application(let subtype, _, let name, let data):
                guard name == PeerHello.applicationName else { continue }
                noteHello(subtype: subtype, name: name, data: data, from: address, now: now.monotonic)
            case .unknown:
                break
            }
        }
    }

    private mutating func noteHello(subtype: UInt8, name: RTCPApplicationName, data: ArraySlice<UInt8>, from address: Address, now: UInt64) {
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

    private mutating func noteReports<Output: CallSessionOutput>(
        _ blocks: RTCPReportBlocks, from address: Address, arrival: NTPTimestamp, now: UInt64, output: inout Output
    ) where Output.Address == Address {
        guard let block = blocks.first(where: { $0.ssrc == ssrc }) else { return }
        remoteReports[address] = (block, now)
        reportLinks(output: &output)
        if let roundTrip = block.roundTripNanoseconds(arrivedAt: arrival) { roundTrips[address] = roundTrip }
    }

    /// A peer that stopped reporting (gone without a word, while we still call it) no longer
    /// decides how much the encoder protects: its last report counts for as long as a silent
    /// peer stays in the call.
    private mutating func forgetStaleReports<Output: CallSessionOutput>(now: UInt64, output: inout Output) where Output.Address == Address {
        let limit = peers.keepaliveTimeout
        var forgotten = false
        // One at a time, in place: a filtered copy would allocate at every report.
        while let stale = remoteReports.first(where: { now - min(now, $0.value.at) > limit })?.key {
            remoteReports[stale] = nil
            forgotten = true
        }
        if forgotten { reportLinks(output: &output) }
    }

    /// The encoder protects against the worst link among the peers still in the call, and
    /// codes for the devices its stream goes to.
    private func reportLinks<Output: CallSessionOutput>(output: inout Output) where Output.Address == Address {
        let worst = remoteReports.values.lazy.map { Int($0.block.fractionLost) * 1000 / 256 }.max() ?? 0
        let worstJitter = remoteReports.values.lazy.map { Int(MediaTime.nanoseconds(samples: Int64($0.block.jitter)) / 1000) }.max() ?? 0
        output.linkReported(LinkFeedback(lossPermille: worst, jitterMicroseconds: worstJitter, listeners: reportedListeners))
    }

    /// The devices our stream goes out to now, each as a copy of its own: peers in the target
    /// heard from within the keepalive timeout (a named peer that is off costs nothing on the
    /// air but its address's lookups), with a session in an encrypted call (nothing is sent to
    /// one without). Allocates nothing.
    private mutating func listeners(now: UInt64) -> Int {
        var count = 0
        for (address, peer) in peers.peers where heardTarget(by: address) != nil && security?.canSend(to: address) != false {
            if let heard = peer.lastHeard, now - min(now, heard) <= peers.keepaliveTimeout { count += 1 }
        }
        return count
    }

    /// A source left (BYE, silence, its peer gone): the playback side stops playing it at once.
    private func stopPlaying<Output: CallSessionOutput>(_ source: UInt32, output: inout Output) where Output.Address == Address {
        if !output.stopPlaying(source) { counters.inboxFull.wrappingAdd(1, ordering: .relaxed) }
    }

    // MARK: Sending

    /// A packet of our own stream: only the target's devices get it, the others' machines never see it.
    mutating func sendAudio<Output: CallSessionOutput>(_ packet: [UInt8], output: inout Output) where Output.Address == Address {
        sentSinceLastReport = true
        // The table's own keys: a list of them would be allocated for every packet.
        for destination in peers.peers.keys where heardTarget(by: destination) != nil {
            send(packet, kind: .rtp, to: destination, output: &output)
        }
    }

    /// A report, our source description and a hello, in one compound datagram to each peer:
    /// written into storage kept between reports, the description and the hello made once for
    /// each state of the talk flag, so that a report allocates nothing.
    private mutating func sendReports<Output: CallSessionOutput>(now: SessionTime, sent: SentFigures, output: inout Output) where Output.Address == Address {
        sources.makeReportBlocks(now: now.monotonic, into: &reportBlocks)
        if reportBlocks.count > 31 { reportBlocks.removeLast(reportBlocks.count - 31) }
        let report: RTCPPacket
        if sentSinceLastReport {
            report = .senderReport(RTCPSenderReport(
                ssrc: ssrc, ntpTimestamp: NTPTimestamp(unixNanoseconds: now.wall.nanosecondsSince1970), rtpTimestamp: sent.rtpTimestamp,
                packetCount: sent.packets, octetCount: sent.octets, reportBlocks: reportBlocks
            ))
        } else {
            report = .receiverReport(RTCPReceiverReport(ssrc: ssrc, reportBlocks: reportBlocks))
        }
        sentSinceLastReport = false
        compound.removeAll(keepingCapacity: true)
        report.append(to: &compound)
        let reportLength = compound.count
        for destination in peers.peers.keys {
            // Each peer is told whether we talk to it, and to whom as far as it is concerned.
            let heard = heardTarget(by: destination)
            compound.removeLast(compound.count - reportLength)
            compound += reportTail(talking: sent.talking && heard != nil, target: heard ?? 0)
            send(compound, kind: .rtcp, to: destination, output: &output)
        }
        publish(now: now.monotonic, waiting: false, output: &output)
    }

    /// Our source description and hello, as they follow every report.
    private mutating func reportTail(talking: Bool, target kind: UInt8) -> [UInt8] {
        let slot = Int(kind) * 2 + (talking ? 1 : 0)
        if let made = reportTails[slot] { return made }
        let heard: HeardTarget = switch (kind, announcement.target.target) {
        case (1, .room(let room)): .room(room)
        case (2, _): .you
        default: .all
        }
        let hello = PeerHello(
            isTalking: talking, listeningPort: localPort,
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

    /// Whether the peer at `address` is in our target, and what it is told (`HeardTarget` on
    /// the wire: 0 all, 1 a room, 2 you); nil when it is not. Allocates nothing.
    mutating func heardTarget(by address: Address) -> UInt8? {
        let target = announcement.target
        switch target.target {
        case .all:
            return 0
        case .room:
            guard let peer = peers.peers[address], target.isRoomNamed(in: peer.rooms) else { return nil }
            return 1
        case .device:
            if let key = security?.remoteKey(of: address), security?.isOwn(key) == false {
                // A paired device: by the name it was paired under, or its key's fingerprint.
                if let name = security?.paired[key]?.name, target.isDeviceNamed(name) { return 2 }
                return target.isFingerprint(rows.fingerprint(of: key)) ? 2 : nil
            }
            // Our own identity's processes, and peers of a plain call: by the name they give.
            guard let name = peers.peers[address]?.name, target.isDeviceNamed(name) else { return nil }
            return 2
        }
    }

    /// Says goodbye to every peer (the call ends) and publishes the last figures.
    mutating func leave<Output: CallSessionOutput>(now: UInt64, output: inout Output) where Output.Address == Address {
        let compound = RTCPPacket.serializeCompound([
            .receiverReport(RTCPReceiverReport(ssrc: ssrc)),
            .goodbye(RTCPGoodbye(sources: [ssrc], reason: "leaving")),
        ])
        for destination in peers.addresses { send(compound, kind: .rtcp, to: destination, output: &output) }
        publish(now: now, waiting: true, output: &output)
    }

    /// Sends an RTP or RTCP packet, sealed for the peer's session in an encrypted call (and
    /// not at all while it has none).
    private mutating func send<Output: CallSessionOutput>(
        _ bytes: [UInt8], kind: SecureDatagram.TransportKind, to destination: Address, output: inout Output
    ) where Output.Address == Address {
        guard security != nil else { return output.send(bytes, to: destination) }
        guard security?.seal(bytes, kind: kind, to: destination, into: &sealed) == true else {
            if kind == .rtp { counters.unsentNoSession.wrappingAdd(1, ordering: .relaxed) }
            return
        }
        output.send(sealed, to: destination)
    }

    // MARK: Publishing

    /// Publishes the peers and link figures for displays and the stats file. While the call
    /// runs a reader holding them means another try at the next tick; at the end it `waits`,
    /// so that the last figures are the final ones.
    private mutating func publish<Output: CallSessionOutput>(now: UInt64, waiting: Bool, output: inout Output) where Output.Address == Address {
        nextPublish = now + Self.publishInterval
        rows.update(peers: peers.peers, now: now, security: security, roundTrips: roundTrips, remoteReports: remoteReports, devicesSeen: &devicesSeen)
        var reached = 0
        for address in peers.peers.keys where heardTarget(by: address) != nil { reached += 1 }
        // Peers came or went, or the target changed: the encoder hears of it within a publish interval.
        let listening = listeners(now: now)
        if listening != reportedListeners {
            reportedListeners = listening
            reportLinks(output: &output)
        }
        let figures = NetworkFigures(
            peers: rows.rows, security: security?.statistics ?? .unencrypted, devicesSeen: devicesSeen,
            target: announcement.target.target, reaches: reached
        )
        if !output.publish(figures, waiting: waiting) { nextPublish = 0 }
    }
}

/// A change in the peers that discovery sees, handed to the network thread.
public enum PeerDirectoryChange<Address: Hashable & Sendable>: Sendable {
    /// The user named this peer (a reloaded configuration).
    case configured(Address)
    /// A peer's service (by name) resolved to this address.
    case appeared(name: String, address: Address)
    /// The service said goodbye or vanished from the LAN.
    case disappeared(name: String)
}
