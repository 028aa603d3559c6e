import IntercomCore
@testable import IntercomSecurity
import Testing

/// Two or more channels joined by a lossless in-memory network, time passed in.
struct ChannelPair {
    typealias Channel = SecureChannel<String>
    var a: Channel
    var b: Channel
    let aKey: [UInt8]
    let bKey: [UInt8]
    var now: UInt64 = 1_000_000_000
    /// Every datagram that went over the wire, oldest first, with who sent it.
    var wire: [(bytes: [UInt8], from: String)] = []

    init(aTrustsB: Bool = true, bTrustsA: Bool = true, configure: (inout Channel.Configuration) -> Void = { _ in }) {
        let aPrivate = Sodium.x25519KeyPair().privateKey, bPrivate = Sodium.x25519KeyPair().privateKey
        aKey = Sodium.x25519PublicKey(aPrivate)
        bKey = Sodium.x25519PublicKey(bPrivate)
        var aConfiguration = Channel.Configuration(staticPrivateKey: aPrivate)
        var bConfiguration = Channel.Configuration(staticPrivateKey: bPrivate)
        configure(&aConfiguration)
        configure(&bConfiguration)
        let (aKey, bKey) = (aKey, bKey)
        a = Channel(configuration: aConfiguration, isTrusted: { aTrustsB && $0 == bKey })
        b = Channel(configuration: bConfiguration, isTrusted: { bTrustsA && $0 == aKey })
        restartB = { Channel(configuration: bConfiguration, isTrusted: { bTrustsA && $0 == aKey }) }
    }

    /// B as it comes back after a restart: the same key, no sessions.
    let restartB: () -> Channel

    /// Runs the handshake work each side deferred (as the call's worker thread does) and
    /// returns what it sends.
    mutating func runDeferredWork() -> [(bytes: [UInt8], from: String, to: String)] {
        var out: [(bytes: [UInt8], from: String, to: String)] = []
        for work in a.takeWork() {
            out += a.apply(Channel.perform(work), now: now).map { ($0.bytes, "a", $0.to) }
        }
        for work in b.takeWork() {
            out += b.apply(Channel.perform(work), now: now).map { ($0.bytes, "b", $0.to) }
        }
        return out
    }

    /// Delivers datagrams back and forth until both sides are quiet; returns the plaintexts each received.
    mutating func deliver(_ initial: [(bytes: [UInt8], to: String)], from sender: String) -> [String: [[UInt8]]] {
        var queue = initial.map { (bytes: $0.bytes, from: sender, to: $0.to) } + runDeferredWork()
        var heard: [String: [[UInt8]]] = [:]
        while !queue.isEmpty {
            let datagram = queue.removeFirst()
            wire.append((datagram.bytes, datagram.from))
            let result = datagram.to == "a"
                ? a.receive(datagram.bytes[...], from: datagram.from, now: now)
                : b.receive(datagram.bytes[...], from: datagram.from, now: now)
            switch result {
            case .plaintext(_, let bytes, _): heard[datagram.to, default: []].append(bytes)
            case .handshake(let reply?): queue.append((reply, datagram.to, datagram.from))
            case .handshake(nil), .dropped: break
            }
            queue += runDeferredWork()
        }
        return heard
    }

    /// Hands one datagram to `receiver` and returns what that brings back: its reply and the
    /// messages its deferred work sends.
    mutating func hand(_ bytes: [UInt8], to receiver: String, from sender: String) -> [[UInt8]] {
        let result = receiver == "a" ? a.receive(bytes[...], from: sender, now: now) : b.receive(bytes[...], from: sender, now: now)
        var out: [[UInt8]] = []
        if case .handshake(let reply?) = result { out.append(reply) }
        return out + runDeferredWork().map(\.bytes)
    }

    /// A starts a handshake with B and B answers: returns A's message 3, not yet delivered.
    mutating func messageThreeHeldBack() throws -> [UInt8] {
        let initiation = try #require((a.maintain(wanted: ["b"], now: now).map(\.bytes) + runDeferredWork().map(\.bytes)).first)
        let response = try #require(hand(initiation, to: "b", from: "a").first)
        return try #require(hand(response, to: "a", from: "b").first)
    }

    /// A asks for B, and both sides handshake.
    mutating func connect() {
        let out = a.maintain(wanted: ["b"], now: now)
        _ = deliver(out, from: "a")
    }

    struct NoSession: Error {}

    mutating func send(_ text: String, from sender: String, kind: SecureDatagram.TransportKind = .rtp) throws -> [UInt8] {
        let sealed = sender == "a" ? a.seal(Array(text.utf8), kind: kind, to: "b") : b.seal(Array(text.utf8), kind: kind, to: "a")
        guard let sealed else { throw NoSession() }
        return sealed
    }
}

extension SecureChannel.Received {
    /// The handshake datagram this receipt answers with, if it is one.
    var handshakeReply: [UInt8]? {
        if case .handshake(let reply?) = self { reply } else { nil }
    }
}

@Suite("Secure channel")
struct SecureChannelTests {
    @Test(arguments: [false, true]) func trustedPeersHandshakeAndTalkBothWays(deferred: Bool) throws {
        var pair = ChannelPair { $0.defersHandshakes = deferred }
        #expect(pair.a.seal([1], kind: .rtp, to: "b") == nil, "nothing is sent before a session exists")
        pair.connect()
        #expect(pair.a.peers["b"] == pair.bKey && pair.b.peers["a"] == pair.aKey)
        let toB = try pair.send("hello", from: "a")
        #expect(pair.deliver([(toB, "b")], from: "a")["b"] == [Array("hello".utf8)])
        let toA = try pair.send("report", from: "b", kind: .rtcp)
        #expect(pair.deliver([(toA, "a")], from: "b")["a"] == [Array("report".utf8)])
        #expect(pair.a.counters.handshakes == 1 && pair.b.counters.handshakes == 1)
    }

    @Test func theSameAudioTwiceGivesDifferentCiphertextAndNoPlaintextOnTheWire() throws {
        var pair = ChannelPair()
        pair.connect()
        let secret = "the quick brown fox jumps over the lazy dog"
        let first = try pair.send(secret, from: "a")
        let second = try pair.send(secret, from: "a")
        #expect(first != second)
        for datagram in pair.wire.map(\.bytes) + [first, second] {
            #expect(!contains(datagram, Array("quick brown".utf8)))
        }
    }

    @Test(arguments: [false, true]) func anUntrustedDeviceGetsNoSessionOnEitherSide(deferred: Bool) {
        var pair = ChannelPair(bTrustsA: false) { $0.defersHandshakes = deferred }
        pair.connect()
        #expect(pair.b.peers.isEmpty)
        #expect(pair.b.counters.untrusted == 1)
        // A finished its half, but B never confirms, so A's session carries nothing B will read.
        if let sealed = try? pair.send("psst", from: "a") {
            #expect(pair.deliver([(sealed, "b")], from: "a").isEmpty)
        }
        var other = ChannelPair(aTrustsB: false) { $0.defersHandshakes = deferred }
        other.connect()
        #expect(other.a.peers.isEmpty && other.b.sessionCount == 0)
        #expect(other.a.counters.untrusted == 1)
    }

    @Test func aFlippedBitAnywhereIsDroppedAndCounted() throws {
        var pair = ChannelPair()
        pair.connect()
        let sealed = try pair.send("voice", from: "a")
        for bit in 0..<(sealed.count * 8) {
            var tampered = sealed
            tampered[bit / 8] ^= 1 << (bit % 8)
            #expect(pair.deliver([(tampered, "b")], from: "a").isEmpty)
        }
        #expect(pair.b.counters.authenticationFailures + pair.b.counters.replays >= sealed.count * 8 - 64)
        #expect(pair.deliver([(sealed, "b")], from: "a")["b"] == [Array("voice".utf8)], "the genuine packet still opens")
    }

    @Test func aReplayIsDroppedButReorderingWithinTheWindowIsNot() throws {
        var pair = ChannelPair()
        pair.connect()
        let packets = try (0..<200).map { try pair.send("p\($0)", from: "a") }
        // Deliver 100…199 first, then 90…99 (late but within the window), then 0…9 (too old).
        #expect(pair.deliver(packets[100..<200].map { ($0, "b") }, from: "a")["b"]?.count == 100)
        #expect(pair.deliver(packets[90..<100].map { ($0, "b") }, from: "a")["b"]?.count == 10)
        #expect(pair.deliver(packets[0..<10].map { ($0, "b") }, from: "a")["b"] == nil)
        let repeated = pair.deliver(packets[150..<160].map { ($0, "b") }, from: "a")
        #expect(repeated["b"] == nil)
        #expect(pair.b.counters.replays == 20)
    }

    @Test func noHandshakeReplyIsLongerThanWhatDrewIt() {
        var pair = ChannelPair()
        pair.connect()
        #expect(SecureDatagram.responseLength <= SecureDatagram.initiationLength)
        let initiations = pair.wire.filter { $0.bytes.first == 1 }.map(\.bytes.count)
        let responses = pair.wire.filter { $0.bytes.first == 2 }.map(\.bytes.count)
        #expect(!responses.isEmpty && responses.allSatisfy { $0 <= initiations.min()! })
    }

    @Test func aFloodOfInitiationsIsRateLimitedAndHalfOpenStateStaysBounded() {
        var pair = ChannelPair()
        var stranger = SecureChannel<String>(configuration: .init(staticPrivateKey: Sodium.x25519KeyPair().privateKey), isTrusted: { _ in true })
        var (answered, cookies) = (0, 0)
        for attempt in 0..<2_000 {
            let now = pair.now + UInt64(attempt) * 500_000  // 2,000 per second for one second
            let out = stranger.maintain(wanted: ["b-\(attempt)"], now: now)
            for datagram in out {
                if case .handshake(let reply?) = pair.b.receive(datagram.bytes[...], from: "stranger-\(attempt)", now: now) {
                    #expect(reply.count <= datagram.bytes.count)
                    // Over the budget, a cookie (no Diffie–Hellman) instead of a response.
                    if reply.first == 6 { cookies += 1 } else { answered += 1 }
                }
            }
        }
        let limits = SecurityLimits()
        #expect(answered <= Int(limits.handshakeBurst + limits.handshakesPerSecond * 1.0) + 1)
        #expect(pair.b.counters.rateLimited >= 2_000 - answered && cookies == pair.b.counters.cookieReplies)
        #expect(pair.b.halfOpenCount <= limits.halfOpenHandshakes)
    }

    /// 2,000 initiations a second from as many addresses at B spend strangers' budget; a peer
    /// with a session, and one B is calling, have budgets of their own. Both join and renewal
    /// finish within a second of when they start, flood or not.
    @Test(arguments: [true, false]) func aFloodFromManyAddressesStarvesNeitherAJoinNorARenewal(joinDuringFlood: Bool) throws {
        let second = ChannelPair.Channel.Configuration.second
        var pair = ChannelPair { $0.rekeyInterval = 10 * second }
        if !joinDuringFlood { pair.connect() }
        var stranger = SecureChannel<String>(configuration: .init(staticPrivateKey: Sodium.x25519KeyPair().privateKey), isTrusted: { _ in true })
        let flood = try #require(stranger.maintain(wanted: ["b"], now: pair.now).first?.bytes)
        var sent = 0
        var joinedAt: UInt64?
        let start = pair.now
        // 20 s in 10 ms steps: the join at once, the renewal due 10 s after it.
        for step in 0..<2_000 {
            pair.now = start + UInt64(step) * second / 100
            for _ in 0..<20 {
                _ = pair.b.receive(flood[...], from: "stranger-\(sent)", now: pair.now)
                sent += 1
            }
            guard step % 10 == 0 else { continue }
            // Both call each other, as discovered peers do.
            _ = pair.deliver(pair.a.maintain(wanted: ["b"], now: pair.now), from: "a")
            _ = pair.deliver(pair.b.maintain(wanted: ["a"], now: pair.now), from: "b")
            if joinedAt == nil, pair.a.canSend(to: "b"), pair.b.canSend(to: "a") { joinedAt = pair.now }
            if step % 50 == 0, joinedAt != nil {
                _ = pair.deliver([(try pair.send("report", from: "a", kind: .rtcp), "b")], from: "a")
                _ = pair.deliver([(try pair.send("report", from: "b", kind: .rtcp), "a")], from: "b")
            }
        }
        #expect(pair.b.counters.rateLimited > 30_000, "the flood was refused")
        let joined = try #require(joinedAt, "no session in 20 s of flood")
        #expect(joined - start <= second, "joined after \(joined - start) ns")
        #expect(pair.a.counters.rekeys >= 1 && pair.b.counters.rekeys >= 1, "renewed: \(pair.a.counters) \(pair.b.counters)")
        #expect(pair.a.counters.rekeys + pair.b.counters.rekeys <= 4, "no more renewals than the interval asks for")
        #expect(pair.deliver([(try pair.send("after", from: "a"), "b")], from: "a")["b"] == [Array("after".utf8)])
    }

    /// Initiations spoofed from each peer's own address, 200 a second both ways, spend that
    /// address's budget; over it, each is answered with a cookie that goes to the real owner of
    /// the address. The peers prove themselves with it and join within a second.
    @Test(arguments: [false, true]) func aFloodSpoofedFromThePeersOwnAddressesIsOutlastedWithCookies(deferred: Bool) throws {
        let second = ChannelPair.Channel.Configuration.second
        var pair = ChannelPair { $0.defersHandshakes = deferred }
        var generator = SeededGenerator(seed: 5)
        let padding = [UInt8](repeating: 0, count: SecureDatagram.initiationPayloadLength)
        var joinedAt: UInt64?
        let start = pair.now
        let calls = start + second
        for step in 0..<300 {
            pair.now = start + UInt64(step) * second / 100
            // Two a step each way (200 a second), with keys of 32 zero bytes or random ones,
            // each step before the peers' own messages.
            for _ in 0..<2 {
                let key = Bool.random(using: &generator)
                    ? [UInt8](repeating: 0, count: NoiseXXHandshake.keyLength)
                    : (0..<NoiseXXHandshake.keyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let forged = SecureDatagram.initiation(senderIndex: UInt32.random(in: 1...UInt32.max, using: &generator), message: key + padding)
                    .serialized()
                // What each answers goes to the real owner of the spoofed address.
                _ = pair.deliver([(forged, "b")], from: "a")
                _ = pair.deliver([(forged, "a")], from: "b")
            }
            guard step % 10 == 0 else { continue }
            // Both call each other, as discovered peers do. For the first second what they send
            // is lost, while the flood spends every budget it can reach.
            let fromA = pair.a.maintain(wanted: ["b"], now: pair.now) + pair.runDeferredWork().map { ($0.bytes, $0.to) }
            let fromB = pair.b.maintain(wanted: ["a"], now: pair.now) + pair.runDeferredWork().map { ($0.bytes, $0.to) }
            guard pair.now >= calls else { continue }
            _ = pair.deliver(fromA, from: "a")
            _ = pair.deliver(fromB, from: "b")
            if joinedAt == nil, pair.a.canSend(to: "b"), pair.b.canSend(to: "a") { joinedAt = pair.now }
        }
        let joined = try #require(joinedAt, "no session in 2 s of flood: \(pair.a.counters) \(pair.b.counters)")
        #expect(joined - calls <= second, "joined after \(joined - calls) ns")
        #expect(pair.a.counters.cookieReplies + pair.b.counters.cookieReplies > 500)
        #expect(pair.deliver([(try pair.send("through", from: "a"), "b")], from: "a")["b"] == [Array("through".utf8)])
    }

    /// A cookie is answered with an initiation carrying its MAC once: the same cookie again
    /// (it did not get us through) waits for the retry timer, so that the two sides never bounce
    /// cookies and initiations between them as fast as the link allows.
    @Test func theSameCookieTwiceIsAnsweredOnce() throws {
        var pair = ChannelPair()
        // B's budget for A's address (a stranger's to B: B does not call A) is spent by
        // initiations spoofed from it.
        var stranger = SecureChannel<String>(configuration: .init(staticPrivateKey: Sodium.x25519KeyPair().privateKey), isTrusted: { _ in true })
        let spoofed = try #require(stranger.maintain(wanted: ["b"], now: pair.now).first?.bytes)
        while pair.b.counters.cookieReplies == 0 { _ = pair.b.receive(spoofed[...], from: "a", now: pair.now) }
        let initiation = try #require(pair.a.maintain(wanted: ["b"], now: pair.now).first?.bytes)
        let cookieReply = try #require(pair.b.receive(initiation[...], from: "a", now: pair.now).handshakeReply, "no cookie reply")
        #expect(cookieReply.first == 6 && cookieReply.count == SecureDatagram.cookieReplyLength)
        let withMAC = try #require(pair.a.receive(cookieReply[...], from: "b", now: pair.now).handshakeReply, "the cookie was not answered")
        #expect(withMAC.prefix(112) == initiation.prefix(112) && withMAC.suffix(16) != initiation.suffix(16))
        #expect(pair.a.receive(cookieReply[...], from: "b", now: pair.now) == .handshake(reply: nil))
        // B answers the MAC from the address's proven budget, a flood from the address or not.
        let response = try #require(pair.b.receive(withMAC[...], from: "a", now: pair.now).handshakeReply, "the initiation with the cookie's MAC was not answered")
        #expect(response.first == 2)
    }

    /// A cookie reply must answer an initiation of ours: one a blind stranger makes up (the
    /// index right, but not knowing the initiation) is refused and changes nothing.
    @Test func aCookieReplyThatAnswersNoInitiationOfOursIsRefused() throws {
        var pair = ChannelPair()
        let initiation = try #require(pair.a.maintain(wanted: ["b"], now: pair.now).first?.bytes)
        let index = UInt32(initiation[4]) << 24 | UInt32(initiation[5]) << 16 | UInt32(initiation[6]) << 8 | UInt32(initiation[7])
        let forged = SecureDatagram.cookieReply(
            receiverIndex: index, cookie: [UInt8](repeating: 9, count: SecureDatagram.cookieLength),
            tag: [UInt8](repeating: 1, count: SecureDatagram.cookieLength)).serialized()
        #expect(forged.count <= initiation.count)
        #expect(pair.a.receive(forged[...], from: "b", now: pair.now) == .dropped)
        #expect(pair.a.counters.badHandshakes == 1)
        pair.now += ChannelPair.Channel.Configuration.second
        let retry = try #require(pair.a.maintain(wanted: ["b"], now: pair.now).first?.bytes)
        #expect(retry == initiation, "the initiation is sent again unchanged, without a MAC")
    }

    @Test(arguments: [false, true]) func rekeyingReplacesKeysWithoutLosingAPacket(deferred: Bool) throws {
        var pair = ChannelPair {
            $0.rekeyInterval = 10_000_000_000
            $0.defersHandshakes = deferred
        }
        pair.connect()
        var delivered = 0
        for second in 1...40 {
            pair.now += 1_000_000_000
            _ = pair.deliver(pair.a.maintain(wanted: ["b"], now: pair.now), from: "a")
            _ = pair.deliver(pair.b.maintain(wanted: ["a"], now: pair.now), from: "b")
            for packet in 0..<5 {
                let toB = try pair.send("a\(second).\(packet)", from: "a")
                let toA = try pair.send("b\(second).\(packet)", from: "b")
                delivered += pair.deliver([(toB, "b")], from: "a")["b"]?.count ?? 0
                delivered += pair.deliver([(toA, "a")], from: "b")["a"]?.count ?? 0
            }
        }
        #expect(delivered == 40 * 5 * 2)
        #expect(pair.a.counters.rekeys + pair.b.counters.rekeys >= 3)
        #expect(pair.a.sessionCount <= 2 && pair.b.sessionCount <= 2, "replaced sessions are let go")
    }

    /// At a rekey the initiator has the new keys before the peer does: its message 3 may be
    /// lost, or still on its way. It keeps sending with the old session until the peer's first
    /// authenticated packet on the new one shows the peer has it too.
    @Test(arguments: [false, true]) func theInitiatorSendsWithTheOldSessionUntilThePeerUsesTheNewOne(deferred: Bool) throws {
        let second = ChannelPair.Channel.Configuration.second
        var pair = ChannelPair {
            $0.rekeyInterval = 10 * second
            $0.defersHandshakes = deferred
        }
        pair.connect()
        for _ in 0..<10 {
            // B's reports keep the session alive until the rekey is due.
            _ = pair.deliver([(try pair.send("report", from: "b", kind: .rtcp), "a")], from: "b")
            pair.now += second
        }
        let finish = try pair.messageThreeHeldBack()
        let old = try pair.send("old keys", from: "a")
        #expect(pair.deliver([(old, "b")], from: "a")["b"] == [Array("old keys".utf8)], "B cannot open the new keys yet")
        // Still waiting: message 3 is repeated, and no new handshake is started meanwhile.
        pair.now += second
        let repeated = pair.a.maintain(wanted: ["b"], now: pair.now) + pair.runDeferredWork().map { ($0.bytes, $0.to) }
        #expect(repeated.map(\.bytes) == [finish])
        #expect(pair.deliver([(try pair.send("still old", from: "a"), "b")], from: "a")["b"] == [Array("still old".utf8)])

        _ = pair.hand(finish, to: "b", from: "a")
        #expect(pair.b.counters.rekeys == 1 && pair.a.counters.rekeys == 0)
        #expect(pair.deliver([(try pair.send("new keys", from: "b"), "a")], from: "b")["a"] == [Array("new keys".utf8)])
        #expect(pair.a.counters.rekeys == 1, "the peer's packet on the new session confirms it")
        let new = try pair.send("switched", from: "a")
        #expect(new[4..<8] != old[4..<8], "sent with the new session")
        #expect(pair.deliver([(new, "b")], from: "a")["b"] == [Array("switched".utf8)])
        #expect(pair.deliver([(old, "b")], from: "a")["b"] == nil, "the old session's packets are still replays")
    }

    /// When every renewal fails, a session is not used past its hard lifetime (Reject-After-
    /// Time): neither side sends or accepts anything on it, and a new handshake is made.
    @Test func aSessionOlderThanItsLifetimeIsRefusedAndANewOneIsMade() throws {
        let second = ChannelPair.Channel.Configuration.second
        var pair = ChannelPair {
            $0.rekeyInterval = 10 * second
            $0.rejectAfter = 15 * second
        }
        pair.connect()
        let established = pair.now
        while pair.now < established + 15 * second {
            // A's renewals never reach B; reports flow both ways on the old session.
            _ = pair.a.maintain(wanted: ["b"], now: pair.now)
            #expect(pair.deliver([(try pair.send("a", from: "a", kind: .rtcp), "b")], from: "a")["b"]?.count == 1)
            #expect(pair.deliver([(try pair.send("b", from: "b", kind: .rtcp), "a")], from: "b")["a"]?.count == 1)
            pair.now += second / 2
        }
        #expect(pair.a.counters.handshakes == 1)
        let late = try pair.send("too late", from: "b")
        #expect(pair.a.receive(late[...], from: "b", now: pair.now) == .dropped, "refused when it arrives")
        let renewal = pair.a.maintain(wanted: ["b"], now: pair.now)
        #expect(pair.a.seal([1], kind: .rtp, to: "b") == nil, "nothing is sent with it")
        #expect(pair.a.sessionCount == 0)
        _ = pair.deliver(renewal, from: "a")
        #expect(pair.a.counters.handshakes == 2 && pair.a.peers["b"] == pair.bKey)
        #expect(pair.deliver([(try pair.send("fresh keys", from: "a"), "b")], from: "a")["b"] == [Array("fresh keys".utf8)])
    }

    /// A peer that restarted (or forgot us in an outage) cannot open what we send; we hear
    /// nothing from it, and handshake again within seconds instead of waiting out the session.
    @Test func aPeerThatLostItsSessionIsHandshakenWithAgainWithinSeconds() throws {
        var pair = ChannelPair()
        pair.connect()
        pair.b = pair.restartB()
        var heardAfter: Int?
        for second in 1...10 where heardAfter == nil {
            pair.now += 1_000_000_000
            _ = pair.deliver(pair.a.maintain(wanted: ["b"], now: pair.now), from: "a")
            let heard = pair.deliver([(try pair.send("report \(second)", from: "a"), "b")], from: "a")
            if heard["b"]?.isEmpty == false { heardAfter = second }
        }
        let after = try #require(heardAfter, "the restarted peer never heard us again")
        #expect(after <= 4, "heard again only after \(after) s")
        // While reports flow, no needless handshakes.
        let handshakes = pair.a.counters.handshakes
        for _ in 1...10 {
            pair.now += 1_000_000_000
            _ = pair.deliver(pair.a.maintain(wanted: ["b"], now: pair.now), from: "a")
            _ = pair.deliver([(try pair.send("a", from: "a"), "b")], from: "a")
            _ = pair.deliver([(try pair.send("b", from: "b"), "a")], from: "b")
        }
        #expect(pair.a.counters.handshakes == handshakes)
    }

    @Test func replayedHandshakeMessagesNeverReplaceTheLiveSession() throws {
        var pair = ChannelPair()
        pair.connect()
        let handshake = pair.wire.filter { (1...3).contains($0.bytes.first ?? 0) }
        // Every handshake message of the call, sent again to both sides, from both addresses.
        for datagram in handshake {
            for (to, from) in [("a", "b"), ("b", "a"), ("b", "attacker")] {
                if to == "a" { _ = pair.a.receive(datagram.bytes[...], from: from, now: pair.now) }
                else { _ = pair.b.receive(datagram.bytes[...], from: from, now: pair.now) }
            }
        }
        #expect(pair.a.counters.handshakes == 1 && pair.b.counters.handshakes == 1)
        #expect(pair.a.counters.rekeys == 0 && pair.b.counters.rekeys == 0)
        let toB = try pair.send("still the same session", from: "a")
        #expect(pair.deliver([(toB, "b")], from: "a")["b"] == [Array("still the same session".utf8)])
        #expect(pair.b.peers["a"] == pair.aKey && pair.b.peers["attacker"] == nil)
    }

    @Test func onlyAnAuthenticatedPacketMovesASessionToANewAddress() throws {
        var pair = ChannelPair()
        pair.connect()
        let genuine = try pair.send("from the new Wi-Fi", from: "a")
        // A forgery from elsewhere moves nothing.
        var forged = genuine
        forged[forged.count - 1] ^= 1
        #expect(pair.b.receive(forged[...], from: "attacker", now: pair.now) == .dropped)
        #expect(pair.b.canSend(to: "a") && !pair.b.canSend(to: "attacker"))
        guard case .plaintext = pair.b.receive(genuine[...], from: "a-roamed", now: pair.now) else {
            Issue.record("the genuine packet opens")
            return
        }
        #expect(pair.b.canSend(to: "a-roamed") && !pair.b.canSend(to: "a"))
        #expect(pair.b.counters.roams == 1)
        // A replay of the same packet from yet another address is refused and moves nothing.
        #expect(pair.b.receive(genuine[...], from: "replayer", now: pair.now) == .dropped)
        #expect(pair.b.canSend(to: "a-roamed"))
    }

    /// A copy of a packet that never reached B (lost, or held back by whoever copied it),
    /// sent from another address after B heard newer ones: authentic and inside the replay
    /// window, yet it moves nothing and is not taken from there.
    @Test func aLostPacketReplayedFromElsewhereMovesNoSession() throws {
        var pair = ChannelPair()
        pair.connect()
        let lost = try pair.send("lost on the way", from: "a")
        let next = try pair.send("arrived", from: "a")
        #expect(pair.deliver([(next, "b")], from: "a")["b"] == [Array("arrived".utf8)])
        #expect(pair.b.receive(lost[...], from: "replayer", now: pair.now) == .dropped)
        #expect(pair.b.canSend(to: "a") && !pair.b.canSend(to: "replayer") && pair.b.counters.roams == 0)
        // From the peer's own address the late packet is still taken (reordering on the LAN).
        #expect(pair.deliver([(lost, "b")], from: "a")["b"] == [Array("lost on the way".utf8)])
        // The newest packet from a new address is the peer roaming, and moves the session.
        let roamed = try pair.send("from the new Wi-Fi", from: "a")
        #expect(pair.deliver([(roamed, "b")], from: "a-roamed")["b"]?.count == 1)
        #expect(pair.b.canSend(to: "a-roamed") && pair.b.counters.roams == 1)
    }

    /// Our own message 1 sent back to us from the peer's address: answered, our answer could
    /// be sent back to us as well, and a handshake with our own key (which our own processes
    /// are trusted with) would take the peer's place. It is not answered.
    @Test func ourOwnInitiationReflectedBackIsNotAnswered() throws {
        let aPrivate = Sodium.x25519KeyPair().privateKey
        let aKey = Sodium.x25519PublicKey(aPrivate)
        // Trusts its own key, as a call does (processes sharing a state directory are one device).
        var a = SecureChannel<String>(configuration: .init(staticPrivateKey: aPrivate), isTrusted: { $0 == aKey })
        let now: UInt64 = 1_000_000_000
        let initiation = try #require(a.maintain(wanted: ["b"], now: now).first?.bytes)
        #expect(a.receive(initiation[...], from: "b", now: now) == .dropped)
        #expect(a.receive(initiation[...], from: "elsewhere", now: now) == .dropped)
        #expect(a.halfOpenCount == 0 && a.sessionCount == 0 && a.counters.badHandshakes == 2)
        // Another device's initiation from the same address is answered as ever.
        var c = SecureChannel<String>(configuration: .init(staticPrivateKey: Sodium.x25519KeyPair().privateKey), isTrusted: { _ in true })
        let theirs = try #require(c.maintain(wanted: ["a"], now: now).first?.bytes)
        let reply = try #require(a.receive(theirs[...], from: "elsewhere", now: now).handshakeReply, "another device's initiation was not answered")
        #expect(reply.first == 2)
    }

    /// A build of another protocol version (version 1: a shorter padding, no cookies) cannot
    /// handshake with this one: its frames are counted apart from junk, answered with nothing,
    /// and noticed for the log at most once per interval, whoever sends them.
    @Test func aFrameOfAnotherProtocolVersionIsNoticedNotAnswered() throws {
        var pair = ChannelPair()
        var old = try #require(pair.a.maintain(wanted: ["b"], now: pair.now).first?.bytes)
        old[1] = 1
        #expect(SecureDatagram.otherVersion(old[...]) == 1 && SecureDatagram(old[...]) == nil)
        #expect(pair.b.receive(old[...], from: "old-build", now: pair.now) == .dropped)
        #expect(pair.b.takeVersionNotice() == .init(address: "old-build", version: 1))
        #expect(pair.b.takeVersionNotice() == nil)
        // More of them within the interval, from anywhere: counted, not noticed again.
        for other in 0..<100 {
            var frame = old
            frame[1] = UInt8(3 + other % 200)
            #expect(pair.b.receive(frame[...], from: "spoofed-\(other)", now: pair.now + UInt64(other) * 1_000_000) == .dropped)
        }
        #expect(pair.b.takeVersionNotice() == nil)
        #expect(pair.b.counters.otherVersion == 101 && pair.b.counters.authenticationFailures == 0 && pair.b.halfOpenCount == 0)
        pair.now += 30 * 1_000_000_000
        #expect(pair.b.receive(old[...], from: "old-build", now: pair.now) == .dropped)
        #expect(pair.b.takeVersionNotice() == .init(address: "old-build", version: 1))
        // Junk is junk: not another version, and not noticed.
        for junk: [UInt8] in [[1, 1, 9, 0], [1], [0x80, 1, 0, 0], [7, 1, 0, 0, 0, 0, 0, 0]] {
            #expect(SecureDatagram.otherVersion(junk[...]) == nil)
        }
        // This build's own frames are of its version.
        pair.connect()
        #expect(pair.wire.allSatisfy { $0.bytes[1] == SecureDatagram.version && SecureDatagram.otherVersion($0.bytes[...]) == nil })
    }

    @Test(arguments: [false, true]) func bothSidesStartingAtOnceEndWithOneWorkingSession(deferred: Bool) throws {
        var pair = ChannelPair { $0.defersHandshakes = deferred }
        let fromA = pair.a.maintain(wanted: ["b"], now: pair.now)
        let fromB = pair.b.maintain(wanted: ["a"], now: pair.now)
        _ = pair.deliver(fromA, from: "a")
        _ = pair.deliver(fromB, from: "b")
        let toB = try pair.send("x", from: "a")
        let toA = try pair.send("y", from: "b")
        #expect(pair.deliver([(toB, "b")], from: "a")["b"] == [[UInt8(ascii: "x")]])
        #expect(pair.deliver([(toA, "a")], from: "b")["a"] == [[UInt8(ascii: "y")]])
    }

    /// Message 1 is not authenticated: one forged "from" the peer's address with an ephemeral key
    /// that wins the tie-break (32 zero bytes, a low-order point, or a valid random key smaller
    /// than ours) must not cancel the initiation we wait on.
    @Test(arguments: [false, true], [false, true])
    func aForgedInitiationFromThePeersAddressCancelsNothing(randomKey: Bool, deferred: Bool) throws {
        var pair = ChannelPair { $0.defersHandshakes = deferred }
        var ours = pair.a.maintain(wanted: ["b"], now: pair.now)
        ours += pair.runDeferredWork().map { ($0.bytes, $0.to) }
        let ourEphemeral = try #require(ours.first?.bytes)[8..<(8 + NoiseXXHandshake.keyLength)]
        var forgedKey = [UInt8](repeating: 0, count: NoiseXXHandshake.keyLength)
        if randomKey {
            repeat { forgedKey = Sodium.x25519KeyPair().publicKey } while !forgedKey.lexicographicallyPrecedes(ourEphemeral)
        }
        let padding = [UInt8](repeating: 0, count: SecureDatagram.initiationPayloadLength)
        let forged = SecureDatagram.initiation(senderIndex: 7, message: forgedKey + padding).serialized()
        // Whatever A answers goes to the real B, which has no use for it.
        _ = pair.deliver([(forged, "a")], from: "b")
        _ = pair.deliver(ours, from: "a")
        #expect(pair.a.peers["b"] == pair.bKey && pair.b.peers["a"] == pair.aKey)
        let toB = try pair.send("heard", from: "a")
        #expect(pair.deliver([(toB, "b")], from: "a")["b"] == [Array("heard".utf8)])
    }

    /// The receiver index is in clear in message 2: junk message 3 with it, from anyone, must
    /// leave the half-open handshake for the initiator's own message 3.
    @Test(arguments: [false, true]) func junkMessageThreeWithTheRightIndexChangesNothing(deferred: Bool) throws {
        var pair = ChannelPair { $0.defersHandshakes = deferred }
        let finish = try pair.messageThreeHeldBack()
        #expect(pair.b.halfOpenCount == 1)
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<5 {
            let junk = Array(finish[0..<8]) + (8..<finish.count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(pair.hand(junk, to: "b", from: "attacker").isEmpty)
        }
        #expect(pair.b.halfOpenCount == 1 && pair.b.sessionCount == 0 && pair.b.counters.badHandshakes == 5)
        _ = pair.hand(finish, to: "b", from: "a")
        #expect(pair.b.peers["a"] == pair.aKey && pair.b.halfOpenCount == 0)
        let toB = try pair.send("through", from: "a")
        #expect(pair.deliver([(toB, "b")], from: "a")["b"] == [Array("through".utf8)])
    }

    /// A message 3 whose static key decrypts was made by the half-open handshake's own
    /// initiator (no one else knows the key it is sealed under): when the rest fails, that
    /// initiator gets no second try, so each answer it drew costs at most one more Diffie–Hellman.
    @Test(arguments: [false, true]) func aFailingMessageThreeFromTheHandshakesOwnInitiatorEndsIt(deferred: Bool) throws {
        var pair = ChannelPair { $0.defersHandshakes = deferred }
        var finish = try pair.messageThreeHeldBack()
        finish[finish.count - 1] ^= 1
        _ = pair.hand(finish, to: "b", from: "a")
        #expect(pair.b.halfOpenCount == 0 && pair.b.sessionCount == 0 && pair.b.counters.badHandshakes == 1)
        finish[finish.count - 1] ^= 1
        _ = pair.hand(finish, to: "b", from: "a")
        #expect(pair.b.sessionCount == 0, "the handshake it ended cannot be finished")
    }

    @Test func aDevicePairedAfterARefusalIsTriedAgainAtOnce() {
        var pair = ChannelPair(aTrustsB: false)
        pair.connect()
        #expect(pair.a.counters.untrusted == 1 && pair.a.peers.isEmpty)
        #expect(pair.a.maintain(wanted: ["b"], now: pair.now + 1_000_000_000).isEmpty, "backing off while untrusted")
        let bKey = pair.bKey
        pair.a.updateTrust { $0 == bKey }
        pair.now += 1_000_000_000
        _ = pair.deliver(pair.a.maintain(wanted: ["b"], now: pair.now), from: "a")
        #expect(pair.a.peers["b"] == pair.bKey && pair.b.peers["a"] == pair.aKey)
    }

    @Test func aDeviceNoLongerTrustedLosesItsSessionAtOnce() {
        var pair = ChannelPair()
        pair.connect()
        pair.b.updateTrust { _ in false }
        #expect(pair.b.peers.isEmpty && pair.b.sessionCount == 0)
        #expect(pair.b.seal([1], kind: .rtp, to: "a") == nil)
    }

    @Test func garbageNeverOpensAndNeverCrashes() {
        var pair = ChannelPair()
        pair.connect()
        var generator = SeededGenerator(seed: 11)
        for length in [0, 1, 7, 8, 16, 31, 72, 108, 128, 200, 1_500] {
            for _ in 0..<50 {
                var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if !bytes.isEmpty { bytes[0] = UInt8.random(in: 1...5, using: &generator) }
                if bytes.count > 1 { bytes[1] = SecureDatagram.version }
                if bytes.count > 3 { bytes[2] = 0; bytes[3] = 0 }
                if case .plaintext = pair.b.receive(bytes[...], from: "noise", now: pair.now) {
                    Issue.record("random bytes opened")
                }
            }
        }
        #expect(pair.b.sessionCount == 1)
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
