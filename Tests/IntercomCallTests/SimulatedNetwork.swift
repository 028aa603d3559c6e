@testable import IntercomCall
import IntercomCore
import IntercomSecurity

/// An address on the simulated network.
struct SimulatedAddress: Hashable, Sendable, CustomStringConvertible {
    var host: UInt8
    var port: UInt16
    var description: String { "10.0.0.\(host):\(port)" }
}

/// What a session did while it handled one event, for the network to carry out.
struct RecordedOutput: CallSessionOutput {
    typealias Address = SimulatedAddress
    struct Played {
        let ssrc: UInt32
        let sequenceNumber: UInt16
        let arrival: UInt64
        let gain: Float?
        let isPage: Bool
    }

    var sent: [(datagram: [UInt8], to: SimulatedAddress)] = []
    var played: [Played] = []
    var stopped: [UInt32] = []
    var work: [SecureChannel<SimulatedAddress>.Work] = []
    var link: LinkFeedback?
    var figures: NetworkFigures?

    mutating func send(_ datagram: [UInt8], to destination: SimulatedAddress) { sent.append((datagram, destination)) }
    mutating func play(_ packet: RTPHeader, payload: ArraySlice<UInt8>, arrival: UInt64, gain: Float?, isPage: Bool) -> Bool {
        played.append(Played(ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber, arrival: arrival, gain: gain, isPage: isPage))
        return true
    }
    mutating func stopPlaying(_ ssrc: UInt32) -> Bool {
        stopped.append(ssrc)
        return true
    }
    mutating func perform(_ work: SecureChannel<SimulatedAddress>.Work) -> Bool {
        self.work.append(work)
        return true
    }
    mutating func note(_ notice: SecureChannel<SimulatedAddress>.VersionNotice) {}
    mutating func linkReported(_ feedback: LinkFeedback) { link = feedback }
    mutating func publish(_ figures: NetworkFigures, waiting: Bool) -> Bool {
        self.figures = figures
        return true
    }
}

/// Call sessions on one virtual clock over a simulated network, in the spirit of an embedded
/// channel: each peer is a `CallSession` with nothing around it, its datagrams go through
/// links with delay and seeded loss, its handshake work is done at once, and a talking peer
/// sends a 20 ms packet of its stream every 20 ms. Seconds of a call pass in milliseconds.
struct SimulatedNetwork {
    struct Peer {
        let name: String
        var address: SimulatedAddress
        var session: CallSession<SimulatedAddress>
        let configuration: CallConfiguration
        let keys: (privateKey: SecretBytes, publicKey: [UInt8])?
        let trusted: Bool
        var calls: [String]
        var talking = true
        var sequenceNumber: UInt16 = 0
        var timestamp: UInt32 = 0
        var packetsSent: UInt32 = 0
        var nextFrame: UInt64 = 0
        /// Arrival times of each stream played, by SSRC.
        var heard: [UInt32: [UInt64]] = [:]
        var stopped: [UInt32] = []
        /// RTP datagrams that reached this peer's address, by the sender's name.
        var rtpDatagramsFrom: [String: Int] = [:]
        var link: LinkFeedback?
        var figures: NetworkFigures?
    }

    /// One direction's link: its delay and the chance of losing a datagram.
    struct Link {
        var delay: Duration = .milliseconds(2)
        var loss = 0.0
    }

    let encrypted: Bool
    private(set) var now: UInt64 = MediaTime.nanoseconds(.seconds(1))
    private(set) var peers: [String: Peer] = [:]
    /// Links by (sender, receiver) name; others are `defaultLink`.
    var links: [String: Link] = [:]
    var defaultLink = Link()
    /// How often sessions renew their keys (set before adding peers).
    var rekeyInterval: Duration = .seconds(120)
    private var inFlight: [(at: UInt64, from: SimulatedAddress, to: SimulatedAddress, bytes: [UInt8])] = []
    private var generator: SeededGenerator
    private var nextSSRC: UInt32 = 0x1000
    /// The wall clock runs this far ahead of the monotonic one.
    private let wallOffset: UInt64 = 1_700_000_000_000_000_000
    static let step = MediaTime.nanoseconds(.milliseconds(1))
    static let frame = MediaTime.nanoseconds(.milliseconds(20))

    init(encrypted: Bool, seed: UInt64 = 1) {
        self.encrypted = encrypted
        generator = SeededGenerator(seed: seed)
    }

    static func linkName(_ from: String, _ to: String) -> String { "\(from)>\(to)" }

    /// A peer at 10.0.0.`host`:5004 that calls `calls` (by their addresses, as a user names
    /// them). Encrypted, it trusts every other trusted peer and they trust it; a peer that is
    /// not `trusted` is a stranger nobody paired with (though it trusts them, as one who
    /// learned their keys would).
    mutating func add(
        _ name: String, host: UInt8, calls: [String] = [], trusted: Bool = true, talking: Bool = true,
        configure: (inout CallConfiguration) -> Void = { _ in }
    ) {
        var configuration = CallConfiguration()
        configuration.name = name
        configure(&configuration)
        let keys = encrypted ? Sodium.x25519KeyPair() : nil
        let address = SimulatedAddress(host: host, port: 5004)
        let session = makeSession(configuration: configuration, address: address, keys: keys, trusted: trusted, calls: calls)
        peers[name] = Peer(
            name: name, address: address, session: session, configuration: configuration, keys: keys, trusted: trusted, calls: calls,
            talking: talking, nextFrame: now
        )
        guard encrypted, trusted else { return }
        for other in peers.keys where other != name {
            let paired = pairedList(for: other)
            peers[other]!.session.trustChanged(paired)
        }
    }

    private mutating func makeSession(
        configuration: CallConfiguration, address: SimulatedAddress, keys: (privateKey: SecretBytes, publicKey: [UInt8])?, trusted: Bool,
        calls: [String]
    ) -> CallSession<SimulatedAddress> {
        nextSSRC += 1
        let security = keys.map { keys in
            SessionSecurity<SimulatedAddress>(
                publicKey: DeviceKey(keys.publicKey), privateKey: keys.privateKey, rekeyInterval: rekeyInterval,
                paired: pairedList(excluding: keys.publicKey), host: { "10.0.0.\($0.host)" }
            )
        }
        return CallSession(
            configuration: configuration, ssrc: nextSSRC, localPort: address.port,
            staticPeers: calls.compactMap { peers[$0]?.address }, security: security
        )
    }

    /// The trusted peers' keys as `name`'s paired list (a stranger's too: it trusts them).
    private func pairedList(for name: String) -> [DeviceKey: TrustedPeer] {
        guard let key = peers[name]?.keys?.publicKey else { return [:] }
        return pairedList(excluding: key)
    }

    private func pairedList(excluding key: [UInt8]) -> [DeviceKey: TrustedPeer] {
        var list: [DeviceKey: TrustedPeer] = [:]
        for peer in peers.values where peer.trusted {
            guard let other = peer.keys?.publicKey, other != key else { continue }
            list[DeviceKey(other)] = TrustedPeer(name: peer.name, listening: PeerListening(volumePercent: 100, muted: false))
        }
        return list
    }

    /// The process of `name` is killed, and started again after `down` of the others' time: a
    /// new session, a new SSRC, the same identity, address and configuration; nothing of the
    /// old one survives.
    mutating func restart(_ name: String, after down: Duration) {
        guard var peer = peers.removeValue(forKey: name) else { return }
        run(for: down)
        peer.session = makeSession(
            configuration: peer.configuration, address: peer.address, keys: peer.keys, trusted: peer.trusted, calls: peer.calls
        )
        peer.sequenceNumber = 0
        peer.packetsSent = 0
        peer.nextFrame = now
        peers[name] = peer
    }

    /// The process of `name` is gone without a word (a power cut, a SIGKILL not followed by a restart).
    mutating func remove(_ name: String) {
        peers[name] = nil
    }

    /// `name` moves to another port (a new DHCP lease, a NAT rebinding): what is sent to its
    /// old address from now on reaches nobody.
    mutating func move(_ name: String, toPort port: UInt16) {
        peers[name]?.address.port = port
    }

    /// Hands an event to one peer's session and carries out what it did.
    mutating func with(_ name: String, _ event: (inout CallSession<SimulatedAddress>, SessionTime, inout RecordedOutput) -> Void) {
        guard var peer = peers.removeValue(forKey: name) else { return }
        var output = RecordedOutput()
        event(&peer.session, SessionTime(monotonic: now, wall: WallClockTime(nanosecondsSince1970: now &+ wallOffset)), &output)
        while !output.work.isEmpty {
            let work = output.work
            output.work = []
            for item in work {
                peer.session.handshakeFinished(SecureChannel<SimulatedAddress>.perform(item), now: now, output: &output)
            }
        }
        for played in output.played { peer.heard[played.ssrc, default: []].append(played.arrival) }
        peer.stopped += output.stopped
        if let link = output.link { peer.link = link }
        if let figures = output.figures { peer.figures = figures }
        for (datagram, destination) in output.sent { transmit(datagram, from: peer, to: destination) }
        peers[name] = peer
    }

    private mutating func transmit(_ datagram: [UInt8], from sender: Peer, to destination: SimulatedAddress) {
        let receiver = peers.values.first { $0.address == destination }?.name ?? "nobody"
        let link = links[Self.linkName(sender.name, receiver)] ?? defaultLink
        guard !generator.chance(link.loss) else { return }
        inFlight.append((now + MediaTime.nanoseconds(link.delay), sender.address, destination, datagram))
    }

    /// Runs every peer for `duration` of virtual time, a millisecond at a time.
    mutating func run(for duration: Duration) {
        let end = now + MediaTime.nanoseconds(duration)
        while now < end {
            deliverDue()
            for name in peers.keys.sorted() {
                let sent = sentFigures(of: name)
                with(name) { session, time, output in session.tick(now: time, sent: sent, output: &output) }
                sendFrameIfDue(name)
            }
            now += Self.step
        }
    }

    private func sentFigures(of name: String) -> SentFigures {
        guard let peer = peers[name] else { return SentFigures() }
        return SentFigures(talking: peer.talking, rtpTimestamp: peer.timestamp, packets: peer.packetsSent, octets: peer.packetsSent * 40)
    }

    private mutating func deliverDue() {
        let due = inFlight.filter { $0.at <= now }
        inFlight.removeAll { $0.at <= now }
        for datagram in due {
            guard let receiver = peers.values.first(where: { $0.address == datagram.to })?.name else { continue }
            if let sender = peers.values.first(where: { $0.address == datagram.from })?.name, Self.isRTP(datagram.bytes) {
                peers[receiver]!.rtpDatagramsFrom[sender, default: 0] += 1
            }
            with(receiver) { session, time, output in session.received(datagram.bytes[...], from: datagram.from, now: time, output: &output) }
        }
    }

    /// RTP in the clear, or sealed as RTP (`SecureDatagram`'s transport kind, its first byte).
    private static func isRTP(_ bytes: [UInt8]) -> Bool {
        bytes.first == UInt8(SecureDatagram.TransportKind.rtp.rawValue) || (!SecureDatagram.isSecure(bytes) && Datagram.isRTP(bytes[...]))
    }

    private mutating func sendFrameIfDue(_ name: String) {
        guard var peer = peers[name], peer.talking, now >= peer.nextFrame else { return }
        let packet = RTPPacket(
            marker: peer.sequenceNumber == 0, payloadType: peer.configuration.payloadType, sequenceNumber: peer.sequenceNumber,
            timestamp: peer.timestamp, ssrc: peer.session.ssrc, payload: Array(repeating: 0xF8, count: 40)
        ).serialized()
        peer.sequenceNumber &+= 1
        peer.timestamp &+= 960
        peer.packetsSent &+= 1
        peer.nextFrame += Self.frame
        peers[name] = peer
        with(name) { session, _, output in session.sendAudio(packet, output: &output) }
    }

    /// The longest gap between arrivals of `listener`'s packets from `speaker`'s current
    /// stream from `start` on (virtual nanoseconds), counting the wait for the first one.
    func longestGap(at listener: String, from speaker: String, since start: UInt64) -> UInt64? {
        guard let ssrc = peers[speaker]?.session.ssrc, let arrivals = peers[listener]?.heard[ssrc] else { return nil }
        var previous = start
        var longest: UInt64 = 0
        for arrival in arrivals where arrival >= start {
            longest = max(longest, arrival - previous)
            previous = arrival
        }
        return max(longest, now - previous)
    }

    /// Packets of `speaker`'s current stream that `listener` played.
    func packetsHeard(at listener: String, from speaker: String) -> Int {
        guard let ssrc = peers[speaker]?.session.ssrc else { return 0 }
        return peers[listener]?.heard[ssrc]?.count ?? 0
    }

    /// When `listener` first played `speaker`'s current stream.
    func firstHeard(at listener: String, from speaker: String) -> UInt64? {
        guard let ssrc = peers[speaker]?.session.ssrc else { return nil }
        return peers[listener]?.heard[ssrc]?.first
    }
}
