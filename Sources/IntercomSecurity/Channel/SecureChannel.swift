import IntercomCore

/// The encrypted call's state: Noise XX handshakes with the peers it is asked to reach or that
/// reach it, a session per peer with a key per direction and kind (RTP, RTCP), packet counters
/// and replay windows, rekeying, and roaming. Pure: time is passed in, datagrams come in and go
/// out as values; the caller owns the socket.
///
/// Rules it keeps (Docs/security.md):
/// - nothing but an authenticated, fresh transport packet yields plaintext;
/// - nothing unauthenticated changes a session or a handshake in progress (a forged message 1
///   cancels no initiation, a forged message 3 ends no half-open handshake);
/// - a handshake is only answered with fewer bytes than it came with, at a bounded rate (a
///   budget per peer's address, one per host proven by a cookie, one shared by strangers;
///   over it, a cookie reply), and keeps a bounded number of half-open states;
/// - a session is only made with a device `isTrusted` accepts, and only sends to the address an
///   authenticated packet last came from;
/// - a new handshake never disturbs the session in use until it has finished and, for its
///   initiator, until the peer has used it; no session is used past `rejectAfter`.
public struct SecureChannel<Address: Hashable & Sendable>: Sendable {
    public struct Configuration: Sendable {
        /// The device's key, in guarded memory; every handshake refers to this one copy.
        public var staticPrivateKey: SecretBytes
        public var prologue: [UInt8]
        /// A session's initiator starts a new handshake after this long (forward secrecy within a call).
        public var rekeyInterval: UInt64 = 120 * Self.second
        /// An initiation not answered, or a finished handshake the peer has not confirmed
        /// with a packet, is sent again after this long (a LAN loses few, so retry soon).
        public var retryInterval: UInt64 = Self.second / 4
        /// A session we started that carries nothing back for this long is started again.
        public var confirmationTimeout: UInt64 = 3 * Self.second
        /// A peer that proved untrusted is not tried again sooner than this.
        public var untrustedBackoff: UInt64 = 10 * Self.second
        /// A session nothing arrived on for this long is dropped.
        public var idleTimeout: UInt64 = 30 * Self.second
        /// Nothing received from a peer we call for this long: handshake again (peers send
        /// reports every second), keeping the old session until the new one is up.
        public var silenceBeforeRehandshake: UInt64 = 3 * Self.second
        /// A replaced session still decrypts for this long (packets already in flight).
        public var replacedSessionGrace: UInt64 = 5 * Self.second
        /// A session this old is refused, both ways, and a new handshake is made (WireGuard's
        /// Reject-After-Time): when renewals keep failing (a flood of handshakes, a stranger in
        /// the way), forward secrecy does not lapse silently. Longer than `rekeyInterval` plus
        /// the responder's 30 s, so that either side's renewal comes first.
        public var rejectAfter: UInt64 = 180 * Self.second
        /// The secret cookies are made with is replaced this often (a cookie from the secret
        /// before still counts), and a cookie we were given is used for this long.
        public var cookieLifetime: UInt64 = 120 * Self.second
        /// Frames of another protocol version are noticed (`takeVersionNotice`) at most this often.
        public var versionNoticeInterval: UInt64 = 30 * Self.second
        /// The host of an address (without its port): the ports of one host that proved
        /// themselves with cookies share one budget, so that one who owns a host cannot draw
        /// a budget for each of its ports. The default, the whole address, suits addresses
        /// without ports.
        public var host: @Sendable (Address) -> String = { String(describing: $0) }
        public var limits = SecurityLimits()
        /// Hand the handshakes' Diffie–Hellman work to the caller (`takeWork`, `perform`,
        /// `apply`) so that it runs on another thread than the one that moves packets; when
        /// false, `receive` and `maintain` do it at once.
        public var defersHandshakes = false

        public static var second: UInt64 { 1_000_000_000 }

        public init(staticPrivateKey: SecretBytes, prologue: [UInt8] = Array("intercom v1".utf8)) {
            self.staticPrivateKey = staticPrivateKey
            self.prologue = prologue
        }
    }

    /// What a received datagram turned out to be.
    public enum Received: Equatable, Sendable {
        /// An authenticated RTP or RTCP packet from the peer `remoteStaticKey` at `address`.
        case plaintext(kind: SecureDatagram.TransportKind, bytes: [UInt8], remoteStaticKey: [UInt8])
        /// A handshake message; `reply` (if any) goes back to the sender.
        case handshake(reply: [UInt8]?)
        /// Refused; the reason is counted in `counters`.
        case dropped
    }

    public struct Counters: Equatable, Sendable {
        /// Packets whose tag did not verify, that named no session, or that came unencrypted.
        public var authenticationFailures = 0
        public var replays = 0
        /// Handshake messages refused because handshakes came faster than the budget allows.
        public var rateLimited = 0
        /// Handshakes that finished with a device that is not trusted.
        public var untrusted = 0
        /// Handshake messages that did not parse or decrypt.
        public var badHandshakes = 0
        public var handshakes = 0
        /// New keys for a peer that already had a session.
        public var rekeys = 0
        /// Sessions that moved to a new address with an authenticated packet.
        public var roams = 0
        /// Initiations over the budget answered with a cookie instead of a handshake.
        public var cookieReplies = 0
        /// Frames of ours by their type but of another protocol version (another build).
        public var otherVersion = 0
    }

    /// A frame of another protocol version came from `address`: a build that cannot make
    /// calls with this one. Told at most once per `versionNoticeInterval`, whoever sends them
    /// (anyone can send such a frame, from any address).
    public struct VersionNotice: Equatable, Sendable {
        public let address: Address
        public let version: UInt8
    }

    public private(set) var counters = Counters()
    private let configuration: Configuration
    private let staticPublicKey: [UInt8]
    private var isTrusted: @Sendable ([UInt8]) -> Bool

    private struct Session: Sendable {
        let remoteIndex: UInt32
        let remoteStaticKey: [UInt8]
        var address: Address
        let isInitiator: Bool
        /// Its four keys (`sessionKeys`), zeroed and freed when the last copy of the session goes.
        let keys: SecretBytes
        var sendCounters: [UInt64] = [0, 0]
        var windows = [ReplayWindow(), ReplayWindow()]
        let established: UInt64
        var lastReceived: UInt64
        var confirmed: Bool
        /// Our last handshake message and when it was sent, repeated until the peer confirms.
        var finishMessage: [UInt8]?
        var finishSentAt: UInt64
        /// When it stopped being the one we send with.
        var replacedAt: UInt64?

        /// An authentic, fresh packet arrived from `address`: returns the address the session had.
        /// Only a packet above every counter seen under its key moves the session to a new
        /// address (roaming): a copy of one the peer sent earlier, replayed from elsewhere
        /// (a packet lost on its way here, or one reordered), never is, and never moves it.
        mutating func accept(_ counter: UInt64, slot: Int, from address: Address, now: UInt64) -> Address {
            let previous = self.address
            if windows[slot].isNewest(counter) { self.address = address }
            windows[slot].accept(counter)
            lastReceived = now
            confirmed = true
            finishMessage = nil
            return previous
        }
    }

    private struct Initiation: Sendable {
        let localIndex: UInt32
        var handshake: NoiseXXHandshake
        let message: [UInt8]
        var sentAt: UInt64
    }

    private struct Response: Sendable {
        var handshake: NoiseXXHandshake
        let remoteIndex: UInt32
        let address: Address
        let createdAt: UInt64
    }

    /// Handshake work: what needs the static key and Diffie–Hellman, cut off from the tables so
    /// that another thread can do it (`perform`) while the owner's tables stay its own.
    public struct Work: Sendable {
        enum Kind: Sendable {
            case respond(message: [UInt8], senderIndex: UInt32)
            case finish(message: [UInt8], senderIndex: UInt32, handshake: NoiseXXHandshake, localIndex: UInt32)
            case complete(message: [UInt8], receiverIndex: UInt32, handshake: NoiseXXHandshake, remoteIndex: UInt32)
            case initiate
        }

        let kind: Kind
        let address: Address
        let staticPrivateKey: SecretBytes
        let staticPublicKey: [UInt8]
        let prologue: [UInt8]
    }

    /// What `perform` made of a piece of work, for `apply`.
    public struct WorkResult: Sendable {
        enum Kind: Sendable {
            case responded(handshake: NoiseXXHandshake, message: [UInt8], senderIndex: UInt32)
            case finished(handshake: NoiseXXHandshake, keys: SecretBytes, message: [UInt8], senderIndex: UInt32, localIndex: UInt32)
            case completed(handshake: NoiseXXHandshake, keys: SecretBytes, receiverIndex: UInt32, remoteIndex: UInt32)
            case initiated(handshake: NoiseXXHandshake, message: [UInt8])
            /// `endsHalfOpen`: the half-open handshake a message 3 from its own initiator failed.
            case failed(endsHalfOpen: UInt32?)
        }

        let kind: Kind
        let address: Address
    }

    private var pendingWork: [Work] = []
    /// Addresses whose initiation is being made elsewhere.
    private var initiating: Set<Address> = []

    private var sessions: [UInt32: Session] = [:]
    /// The last packet opened, handed out as `Received.plaintext`: a caller done with it by the
    /// next `receive` lets this one reuse its storage (one that keeps it gets its own copy).
    private var opened: [UInt8] = []
    /// The session each address is sent to with.
    private var current: [Address: UInt32] = [:]
    /// A session we started that replaces `current` for its address only once the peer's first
    /// authenticated packet on it shows that the peer has it too (WireGuard's rule): until
    /// then our message 3 may have been lost, and what we sent with it would be lost as well.
    private var successors: [Address: UInt32] = [:]
    private var initiations: [Address: Initiation] = [:]
    private var responses: [UInt32: Response] = [:]
    private var untrustedUntil: [Address: UInt64] = [:]
    /// Strangers' handshakes share one budget; a flood of them from many addresses spends it all.
    private var handshakeBudget: TokenBucket
    /// Each address we have a session with or are calling has a budget of its own, so that a
    /// flood from elsewhere cannot starve that peer's renewals or its answer to our call. One
    /// who spoofs such an address spends only that address's budget; the table holds at most
    /// the addresses of sessions and of our initiations, both bounded.
    private var knownBudgets: [Address: TokenBucket] = [:]
    /// Hosts that proved themselves with a cookie's MAC, each with a budget (`takeProvenBudget`).
    private var provenBudgets: [String: (bucket: TokenBucket, lastUsed: UInt64)] = [:]
    /// The secret our cookies are made with, the one before it, and when it was made.
    private var cookieSecrets: (current: [UInt8], previous: [UInt8]?, madeAt: UInt64)?
    /// Cookies responders gave us, by their address: our initiations there carry a MAC under them.
    private var cookies: [Address: (cookie: [UInt8], received: UInt64)] = [:]
    private var versionNotice: VersionNotice?
    private var nextVersionNotice: UInt64 = 0

    public init(configuration: Configuration, isTrusted: @escaping @Sendable ([UInt8]) -> Bool) {
        self.configuration = configuration
        self.isTrusted = isTrusted
        staticPublicKey = Sodium.x25519PublicKey(configuration.staticPrivateKey)
        handshakeBudget = TokenBucket(
            perSecond: configuration.limits.handshakesPerSecond, burst: configuration.limits.handshakeBurst)
    }

    /// Replaces the trust rule (a device was paired or unpaired); sessions with devices no longer
    /// trusted end at once, and devices refused before are tried again.
    public mutating func updateTrust(_ isTrusted: @escaping @Sendable ([UInt8]) -> Bool) {
        self.isTrusted = isTrusted
        // A device refused under the old list may be paired now: try it again at once.
        untrustedUntil.removeAll()
        for (index, session) in sessions where !isTrusted(session.remoteStaticKey) { drop(index) }
    }

    // MARK: Sending

    /// Whether `address` has a session to send with.
    public func canSend(to address: Address) -> Bool { current[address] != nil }

    /// The datagram that carries `plaintext` to `address`, or nil when there is no session yet.
    public mutating func seal(_ plaintext: [UInt8], kind: SecureDatagram.TransportKind, to address: Address) -> [UInt8]? {
        var datagram: [UInt8] = []
        return seal(plaintext, kind: kind, to: address, into: &datagram) ? datagram : nil
    }

    /// `seal` into `datagram`, replacing what it held (a caller that keeps it from packet to
    /// packet allocates nothing); false when there is no session yet.
    public mutating func seal(_ plaintext: [UInt8], kind: SecureDatagram.TransportKind, to address: Address, into datagram: inout [UInt8]) -> Bool {
        let slot = Self.slot(kind)
        guard let index = current[address], let counter = sessions[index]?.sendCounters[slot],
              counter < configuration.limits.packetsPerKey else { return false }
        updateSession(index) { $0.sendCounters[slot] = counter + 1 }
        guard let session = sessions[index] else { return false }
        datagram.removeAll(keepingCapacity: true)
        datagram.reserveCapacity(SecureDatagram.transportOverhead + plaintext.count)
        SecureDatagram.appendTransportHeader(kind, session.remoteIndex, counter, to: &datagram)
        // The key is read where it is kept: nothing is copied, nothing allocated.
        session.keys.withUnsafeBytes(offset: Self.keyOffset(sending: true, slot: slot), count: Sodium.aeadKeyBytes) {
            Sodium.seal(key: $0, counter: counter, plaintext: plaintext, appendingTo: &datagram)
        }
        return true
    }

    /// Changes a session where it is kept, for every packet: taken out of the table, changed
    /// while nothing else refers to it, and put back. Changing it through the table's subscript
    /// (`sessions[index]?.…`), or changing a copy, copies its arrays or the table on every packet.
    @discardableResult
    private mutating func updateSession<Result>(_ index: UInt32, _ change: (inout Session) -> Result) -> Result? {
        guard var session = sessions.removeValue(forKey: index) else { return nil }
        defer { sessions[index] = session }
        return change(&session)
    }

    // MARK: Receiving

    public mutating func receive(_ bytes: ArraySlice<UInt8>, from address: Address, now: UInt64) -> Received {
        guard let datagram = SecureDatagram(bytes) else {
            if let version = SecureDatagram.otherVersion(bytes) {
                // Another build's frame: nothing of it can be read, and nothing is answered
                // (a stranger must not draw bytes); the user is told, now and then.
                counters.otherVersion += 1
                if now >= nextVersionNotice {
                    versionNotice = VersionNotice(address: address, version: version)
                    nextVersionNotice = now + configuration.versionNoticeInterval
                }
                return .dropped
            }
            counters.authenticationFailures += 1
            return .dropped
        }
        switch datagram {
        case .transport(let kind, let receiverIndex, let counter, _):
            return open(kind: kind, index: receiverIndex, counter: counter, datagram: bytes, from: address, now: now)
        case .initiation(let senderIndex, let message):
            return respond(to: message, senderIndex: senderIndex, datagram: bytes, from: address, now: now)
        case .response(let senderIndex, let receiverIndex, let message):
            return finish(message, senderIndex: senderIndex, receiverIndex: receiverIndex, from: address, now: now)
        case .finish(let receiverIndex, let message):
            return complete(message, receiverIndex: receiverIndex, from: address, now: now)
        case .cookieReply(let receiverIndex, let cookie, let tag):
            return takeCookie(cookie, tag: tag, receiverIndex: receiverIndex, from: address, now: now)
        }
    }

    private mutating func open(
        kind: SecureDatagram.TransportKind, index: UInt32, counter: UInt64, datagram: ArraySlice<UInt8>,
        from address: Address, now: UInt64
    ) -> Received {
        let slot = Self.slot(kind)
        guard let established = sessions[index]?.established, now - min(now, established) < configuration.rejectAfter,
              let fresh = sessions[index]?.windows[slot].isFresh(counter) else {
            counters.authenticationFailures += 1
            return .dropped
        }
        guard fresh else {
            counters.replays += 1
            return .dropped
        }
        guard let keys = sessions[index]?.keys,
              keys.withUnsafeBytes(offset: Self.keyOffset(sending: false, slot: slot), count: Sodium.aeadKeyBytes, {
                  Sodium.open(key: $0, counter: counter, datagram: datagram, associatedCount: SecureDatagram.transportHeaderLength, into: &opened)
              })
        else {
            counters.authenticationFailures += 1
            return .dropped
        }
        if let session = sessions[index], session.address != address, !session.windows[slot].isNewest(counter) {
            // Authentic, but from elsewhere and older than the newest seen: a copy of a packet
            // lost on its way here, replayed from another address. It may not move the session
            // (only the newest may), nor be taken from an address that is not the peer's.
            counters.replays += 1
            return .dropped
        }
        guard let previousAddress = updateSession(index, { $0.accept(counter, slot: slot, from: address, now: now) }) else {
            return .dropped
        }
        if successors[previousAddress] == index {
            // The peer sends with the session we started: so do we from now on, and the one it
            // replaces still decrypts for a grace period.
            successors[previousAddress] = nil
            if let replaced = current[previousAddress], replaced != index {
                sessions[replaced]?.replacedAt = now
                counters.rekeys += 1
            }
            current[previousAddress] = index
        }
        if previousAddress != address {
            // Roaming: only an authenticated, fresh packet moves a session.
            if current[previousAddress] == index { current[previousAddress] = nil }
            counters.roams += 1
        }
        guard let session = sessions[index] else { return .dropped }
        if session.replacedAt == nil, current[address] == nil { current[address] = index }
        return .plaintext(kind: kind, bytes: opened, remoteStaticKey: session.remoteStaticKey)
    }

    /// Noise message 1 from anyone: answered (with fewer bytes) while the budget allows.
    private mutating func respond(
        to message: [UInt8], senderIndex: UInt32, datagram: ArraySlice<UInt8>, from address: Address, now: UInt64
    ) -> Received {
        // Our own message 1 sent back to us (by one who read it on its way): answering it would
        // let them send our answer back too, and finish a handshake with our own key, which our
        // own processes are trusted with, in place of the peer's session at that address.
        let theirEphemeral = message.prefix(NoiseXXHandshake.keyLength)
        if initiations.values.contains(where: { $0.message[8..<(8 + NoiseXXHandshake.keyLength)].elementsEqual(theirEphemeral) }) {
            counters.badHandshakes += 1
            return .dropped
        }
        if let ours = initiations[address] {
            // Both sides started at once: the initiation with the smaller ephemeral key goes on.
            // Message 1 is not authenticated (anyone can send one "from" the peer's address), so
            // it only decides whether we answer: when theirs wins, ours is kept until theirs
            // finishes with a trusted key (`install`), and a forged one cancels nothing.
            let ourEphemeral = ours.message[8..<(8 + NoiseXXHandshake.keyLength)]
            if ourEphemeral.lexicographicallyPrecedes(message.prefix(NoiseXXHandshake.keyLength)) { return .handshake(reply: nil) }
        }
        if carriesValidCookieMAC(datagram, from: address, now: now) {
            // Only who receives at this address could have read the cookie the MAC is made with:
            // the address is not spoofed, and has a budget no spoofed flood can spend.
            guard takeProvenBudget(for: address, now: now) else {
                counters.rateLimited += 1
                return .dropped
            }
            return dispatch(.respond(message: message, senderIndex: senderIndex), for: address, now: now)
        }
        guard takeHandshakeBudget(for: address, now: now) else {
            // Over budget: a cookie for the address instead of a handshake, costing two MACs and
            // no Diffie–Hellman, in fewer bytes than the initiation (WireGuard's cookie reply).
            // The real owner of the address gets it and proves itself in its next initiation;
            // one who only spoofs the address never sees it.
            counters.rateLimited += 1
            counters.cookieReplies += 1
            let cookie = cookie(for: address, secret: cookieSecret(now: now).current)
            let tag = Self.cookieReplyTag(cookie, initiation: datagram)
            return .handshake(reply: SecureDatagram.cookieReply(receiverIndex: senderIndex, cookie: cookie, tag: tag).serialized())
        }
        return dispatch(.respond(message: message, senderIndex: senderIndex), for: address, now: now)
    }

    // MARK: Cookies

    /// The secret cookies are made with, replaced every `cookieLifetime`, and the one before.
    private mutating func cookieSecret(now: UInt64) -> (current: [UInt8], previous: [UInt8]?) {
        if let secrets = cookieSecrets, now - min(now, secrets.madeAt) < configuration.cookieLifetime {
            return (secrets.current, secrets.previous)
        }
        // The one before counts only while its cookies may still be in use: one lifetime on.
        let previous = cookieSecrets.flatMap { now - min(now, $0.madeAt) < 2 * configuration.cookieLifetime ? $0.current : nil }
        let made = (current: Sodium.randomBytes(32), previous: previous, madeAt: now)
        cookieSecrets = made
        return (made.current, made.previous)
    }

    /// The cookie for `address`: a MAC of its description (a socket address's host and port)
    /// under the secret, so that only the secret's holder makes it and only the address gets it.
    private func cookie(for address: Address, secret: [UInt8]) -> [UInt8] {
        Array(Sodium.hmacSHA256(key: secret, Self.cookieLabel, Array(String(describing: address).utf8)).prefix(SecureDatagram.cookieLength))
    }

    private static var cookieLabel: [UInt8] { Array("intercom cookie".utf8) }
    private static var cookieReplyLabel: [UInt8] { Array("intercom cookie reply".utf8) }

    /// The bytes of an initiation that its MAC covers: all before the MAC.
    private static func macCovered(_ initiation: some Collection<UInt8>) -> [UInt8] {
        Array(initiation.prefix(SecureDatagram.initiationLength - SecureDatagram.cookieLength))
    }

    private static func initiationMAC(_ cookie: [UInt8], initiation: some Collection<UInt8>) -> [UInt8] {
        Array(Sodium.hmacSHA256(key: cookie, macCovered(initiation)).prefix(SecureDatagram.cookieLength))
    }

    /// Binds a cookie reply to the initiation it answers: only who saw the initiation (its
    /// sender, or someone on the path) can make it, so a blind stranger cannot feed us cookies.
    private static func cookieReplyTag(_ cookie: [UInt8], initiation: some Collection<UInt8>) -> [UInt8] {
        Array(Sodium.hmacSHA256(key: cookie, cookieReplyLabel, macCovered(initiation)).prefix(SecureDatagram.cookieLength))
    }

    private mutating func carriesValidCookieMAC(_ datagram: ArraySlice<UInt8>, from address: Address, now: UInt64) -> Bool {
        let mac = Array(datagram.suffix(SecureDatagram.cookieLength))
        guard mac.contains(where: { $0 != 0 }) else { return false }
        let secrets = cookieSecret(now: now)
        return [secrets.current, secrets.previous].contains { secret in
            secret.map { Sodium.constantTimeEqual(mac, Self.initiationMAC(cookie(for: address, secret: $0), initiation: datagram)) } ?? false
        }
    }

    /// An address that proved with a cookie that it is not spoofed: a budget for its host, in a
    /// table as large as the session table, the least recently used let go when it is full.
    private mutating func takeProvenBudget(for address: Address, now: UInt64) -> Bool {
        let limits = configuration.limits
        let host = configuration.host(address)
        if provenBudgets[host] == nil, provenBudgets.count >= limits.sessions,
           let stalest = provenBudgets.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
            provenBudgets[stalest] = nil
        }
        var entry = provenBudgets[host] ?? (TokenBucket(perSecond: limits.peerHandshakesPerSecond, burst: limits.peerHandshakeBurst), now)
        entry.lastUsed = now
        defer { provenBudgets[host] = entry }
        return entry.bucket.take(now: now)
    }

    /// A cookie reply to our initiation: kept for the address, and the initiation sent again at
    /// once with its MAC (the reply goes back where the cookie came from). Only a new cookie is
    /// answered at once: one we already used did not get us through, and answering it again
    /// would bounce between the two sides as fast as the link allows; the retry timer sends
    /// the next initiation.
    private mutating func takeCookie(_ cookie: [UInt8], tag: [UInt8], receiverIndex: UInt32, from address: Address, now: UInt64) -> Received {
        guard var initiation = initiations[address], initiation.localIndex == receiverIndex,
              Sodium.constantTimeEqual(tag, Self.cookieReplyTag(cookie, initiation: initiation.message)) else {
            counters.badHandshakes += 1
            return .dropped
        }
        let isNew = cookies[address]?.cookie != cookie
        cookies[address] = (cookie, now)
        guard isNew else { return .handshake(reply: nil) }
        initiation.sentAt = now
        initiations[address] = initiation
        return .handshake(reply: withCookieMAC(initiation.message, to: address, now: now))
    }

    /// An initiation to `address` with the MAC under the cookie it gave us, while that is fresh.
    private func withCookieMAC(_ initiation: [UInt8], to address: Address, now: UInt64) -> [UInt8] {
        guard let given = cookies[address], now - min(now, given.received) < configuration.cookieLifetime else { return initiation }
        return Self.macCovered(initiation) + Self.initiationMAC(given.cookie, initiation: initiation)
    }

    private mutating func takeHandshakeBudget(for address: Address, now: UInt64) -> Bool {
        guard isKnown(address) else { return handshakeBudget.take(now: now) }
        let limits = configuration.limits
        return knownBudgets[address, default: TokenBucket(perSecond: limits.peerHandshakesPerSecond, burst: limits.peerHandshakeBurst)]
            .take(now: now)
    }

    /// An address with a session or one we are calling (the peers named or discovered).
    private func isKnown(_ address: Address) -> Bool {
        current[address] != nil || initiations[address] != nil || initiating.contains(address)
    }

    /// Noise message 2, answering our initiation: finish, then send message 3.
    private mutating func finish(_ message: [UInt8], senderIndex: UInt32, receiverIndex: UInt32, from address: Address, now: UInt64) -> Received {
        guard let initiation = initiations[address], initiation.localIndex == receiverIndex else {
            counters.badHandshakes += 1
            return .dropped
        }
        return dispatch(.finish(message: message, senderIndex: senderIndex, handshake: initiation.handshake, localIndex: receiverIndex),
                        for: address, now: now)
    }

    /// Noise message 3: the responder's side of a finished handshake.
    private mutating func complete(_ message: [UInt8], receiverIndex: UInt32, from address: Address, now: UInt64) -> Received {
        // A repeat of the message that finished a session we already have.
        if sessions[receiverIndex] != nil { return .handshake(reply: nil) }
        // Read on a copy: the half-open handshake stays until a message 3 finishes it, so junk
        // sent with its receiver index (in clear in message 2) cannot end it. Junk fails at the
        // first AEAD, before any Diffie–Hellman; a message that gets further is from the
        // handshake's own initiator, and its failure ends the handshake (`perform`).
        guard let response = responses[receiverIndex] else {
            counters.badHandshakes += 1
            return .dropped
        }
        return dispatch(.complete(message: message, receiverIndex: receiverIndex, handshake: response.handshake, remoteIndex: response.remoteIndex),
                        for: address, now: now)
    }

    // MARK: Handshake work

    /// Queues the work for the caller, or does it now and answers with what it sends back.
    private mutating func dispatch(_ kind: Work.Kind, for address: Address, now: UInt64) -> Received {
        let work = Work(
            kind: kind, address: address, staticPrivateKey: configuration.staticPrivateKey, staticPublicKey: staticPublicKey,
            prologue: configuration.prologue)
        if configuration.defersHandshakes {
            pendingWork.append(work)
            return .handshake(reply: nil)
        }
        let result = Self.perform(work)
        if case .failed = result.kind {
            apply(result, now: now)
            return .dropped
        }
        return .handshake(reply: apply(result, now: now).first?.bytes)
    }

    /// The work queued since the last call, for `perform` elsewhere (deferred handshakes).
    public mutating func takeWork() -> [Work] {
        defer { pendingWork.removeAll() }
        return pendingWork
    }

    /// Work that could not be handed on (the queue to the other thread was full): counted as
    /// rate-limited, and an initiation is tried again at the next upkeep.
    public mutating func abandon(_ work: Work) {
        counters.rateLimited += 1
        if case .initiate = work.kind { initiating.remove(work.address) }
    }

    /// The Diffie–Hellman part of a handshake step; touches no table, so any thread may run it.
    public static func perform(_ work: Work) -> WorkResult {
        let kind: WorkResult.Kind
        do {
            switch work.kind {
            case .respond(let message, let senderIndex):
                var handshake = NoiseXXHandshake(
                    role: .responder, staticPrivateKey: work.staticPrivateKey, staticPublicKey: work.staticPublicKey, prologue: work.prologue)
                _ = try handshake.readMessage(message)
                let reply = try handshake.writeMessage()
                kind = .responded(handshake: handshake, message: reply, senderIndex: senderIndex)
            case .finish(let message, let senderIndex, var handshake, let localIndex):
                _ = try handshake.readMessage(message)
                let third = try handshake.writeMessage()
                guard let keys = sessionKeys(handshake) else { throw NoiseXXHandshake.Failure.outOfTurn }
                kind = .finished(handshake: handshake, keys: keys, message: third, senderIndex: senderIndex, localIndex: localIndex)
            case .complete(let message, let receiverIndex, var handshake, let remoteIndex):
                do {
                    _ = try handshake.readMessage(message)
                } catch .foreign {
                    return WorkResult(kind: .failed(endsHalfOpen: nil), address: work.address)
                } catch {
                    return WorkResult(kind: .failed(endsHalfOpen: receiverIndex), address: work.address)
                }
                guard let keys = sessionKeys(handshake) else { throw NoiseXXHandshake.Failure.outOfTurn }
                kind = .completed(handshake: handshake, keys: keys, receiverIndex: receiverIndex, remoteIndex: remoteIndex)
            case .initiate:
                var handshake = NoiseXXHandshake(
                    role: .initiator, staticPrivateKey: work.staticPrivateKey, staticPublicKey: work.staticPublicKey, prologue: work.prologue)
                let message = try handshake.writeMessage(payload: [UInt8](repeating: 0, count: SecureDatagram.initiationPayloadLength))
                kind = .initiated(handshake: handshake, message: message)
            }
        } catch {
            kind = .failed(endsHalfOpen: nil)
        }
        return WorkResult(kind: kind, address: work.address)
    }

    /// Brings a performed step into the tables; returns the datagrams to send.
    @discardableResult
    public mutating func apply(_ result: WorkResult, now: UInt64) -> [(bytes: [UInt8], to: Address)] {
        let address = result.address
        switch result.kind {
        case .failed(let halfOpen):
            counters.badHandshakes += 1
            if let halfOpen { responses[halfOpen] = nil }
            return []
        case .responded(let handshake, let message, let senderIndex):
            if responses.count >= configuration.limits.halfOpenHandshakes,
               let oldest = responses.min(by: { $0.value.createdAt < $1.value.createdAt })?.key {
                responses[oldest] = nil
            }
            let localIndex = freshIndex()
            responses[localIndex] = Response(handshake: handshake, remoteIndex: senderIndex, address: address, createdAt: now)
            return [(SecureDatagram.response(senderIndex: localIndex, receiverIndex: senderIndex, message: message).serialized(), address)]
        case .finished(let handshake, let keys, let message, let senderIndex, let localIndex):
            // Superseded (another answer finished it, or the peer was let go) while it was worked on.
            guard initiations[address]?.localIndex == localIndex else { return [] }
            initiations[address] = nil
            guard let remoteStatic = handshake.remoteStaticKey, isTrusted(remoteStatic) else {
                counters.untrusted += 1
                untrustedUntil[address] = now + configuration.untrustedBackoff
                return []
            }
            let finishMessage = SecureDatagram.finish(receiverIndex: senderIndex, message: message).serialized()
            install(handshake, keys: keys, localIndex: localIndex, remoteIndex: senderIndex, address: address, now: now, finishMessage: finishMessage)
            return [(finishMessage, address)]
        case .completed(let handshake, let keys, let receiverIndex, let remoteIndex):
            // Finished by another copy of message 3 while this one was read, or forgotten.
            guard sessions[receiverIndex] == nil, responses.removeValue(forKey: receiverIndex) != nil else { return [] }
            guard let remoteStatic = handshake.remoteStaticKey, isTrusted(remoteStatic) else {
                counters.untrusted += 1
                return []
            }
            install(handshake, keys: keys, localIndex: receiverIndex, remoteIndex: remoteIndex, address: address, now: now)
            return []
        case .initiated(let handshake, let message):
            guard initiating.remove(address) != nil, initiations[address] == nil else { return [] }
            let localIndex = freshIndex()
            let datagram = SecureDatagram.initiation(senderIndex: localIndex, message: message).serialized()
            initiations[address] = Initiation(localIndex: localIndex, handshake: handshake, message: datagram, sentAt: now)
            return [(withCookieMAC(datagram, to: address, now: now), address)]
        }
    }

    /// A finished handshake's session keys, in one guarded buffer: sending RTP, sending RTCP,
    /// receiving RTP, receiving RTCP (`keyOffset`), each derived from the transport key of its
    /// direction, told apart by kind. Made by `perform`, off the thread that moves packets; the
    /// two transport keys they come from are freed, zeroed, on return.
    static func sessionKeys(_ handshake: NoiseXXHandshake) -> SecretBytes? {
        guard let transport = handshake.transportKeys() else { return nil }
        let kinds = SecureDatagram.TransportKind.allCases
        return SecretBytes(count: 4 * Sodium.aeadKeyBytes) { out in
            for (sending, key) in [(true, transport.sending), (false, transport.receiving)] {
                key.withUnsafeBytes { key in
                    for kind in kinds {
                        let offset = keyOffset(sending: sending, slot: slot(kind))
                        Sodium.deriveSubkey(
                            of: key, id: UInt64(kind.rawValue), context: "intercom",
                            into: UnsafeMutableRawBufferPointer(rebasing: out[offset..<(offset + Sodium.aeadKeyBytes)]))
                    }
                }
            }
        }
    }

    /// Where in a session's keys the key of a direction and slot is.
    static func keyOffset(sending: Bool, slot: Int) -> Int { ((sending ? 0 : 2) + slot) * Sodium.aeadKeyBytes }

    private mutating func install(
        _ handshake: NoiseXXHandshake, keys: SecretBytes, localIndex: UInt32, remoteIndex: UInt32, address: Address, now: UInt64,
        finishMessage: [UInt8]? = nil
    ) {
        guard let remoteStatic = handshake.remoteStaticKey else { return }
        let session = Session(
            remoteIndex: remoteIndex, remoteStaticKey: remoteStatic, address: address,
            isInitiator: handshake.role == .initiator, keys: keys,
            established: now, lastReceived: now, confirmed: handshake.role == .responder,
            finishMessage: finishMessage, finishSentAt: now
        )
        counters.handshakes += 1
        if handshake.role == .initiator, let inUse = current[address], let lastReceived = sessions[inUse]?.lastReceived,
           now - min(now, lastReceived) < configuration.silenceBeforeRehandshake {
            // The session in use still carries the peer's packets: the new one is sent with only
            // once the peer confirms it (`open`). (One gone silent is likely lost to the peer,
            // which restarted: the new one is used at once, as it loses nothing more.) An earlier
            // one still waiting for confirmation is superseded.
            if let earlier = successors[address] { drop(earlier) }
            evictIfFull()
            sessions[localIndex] = session
            successors[address] = localIndex
            return
        }
        if handshake.role == .responder {
            // The peer's initiation finished, authenticated: it is the one that goes on, and
            // ours to the same address (started at the same time, or still being made) is let go.
            initiations[address] = nil
            initiating.remove(address)
        }
        if let previous = current[address], sessions[previous] != nil {
            sessions[previous]?.replacedAt = now
            counters.rekeys += 1
        }
        evictIfFull()
        sessions[localIndex] = session
        current[address] = localIndex
    }

    private mutating func evictIfFull() {
        if sessions.count >= configuration.limits.sessions,
           let oldest = sessions.min(by: { $0.value.lastReceived < $1.value.lastReceived })?.key {
            drop(oldest)
        }
    }

    // MARK: Upkeep

    /// Starts, repeats and renews handshakes towards `wanted` (the peers the user named or
    /// discovery found) and forgets what has expired. Returns the datagrams to send.
    public mutating func maintain(wanted: some Sequence<Address>, now: UInt64) -> [(bytes: [UInt8], to: Address)] {
        // First, so that a session refused for its age is handshaken for again at once.
        expire(now: now)
        var out: [(bytes: [UInt8], to: Address)] = []
        for address in wanted {
            if let until = untrustedUntil[address], now < until { continue }
            if let index = successors[address], let session = sessions[index] {
                if let finish = repeatedFinish(index, now: now) { out.append((finish, address)) }
                // Waiting for the peer to use the new session; the one in use carries the call.
                if now - min(now, session.established) < configuration.confirmationTimeout { continue }
                drop(index)
            }
            if let index = current[address], let session = sessions[index] {
                let age = now - min(now, session.established)
                if let finish = repeatedFinish(index, now: now) { out.append((finish, address)) }
                // Reports arrive every second: a session that hears nothing for a few is one the
                // peer has lost (it restarted, or forgot us during an outage). A new handshake
                // brings the call back at once rather than when the session times out.
                let silent = now - min(now, session.lastReceived) >= configuration.silenceBeforeRehandshake
                let due = silent || (session.isInitiator
                    ? age >= configuration.rekeyInterval || (!session.confirmed && age >= configuration.confirmationTimeout)
                    // The responder renews a session its initiator has let grow old.
                    : age >= configuration.rekeyInterval + 30 * Configuration.second)
                if !due { continue }
            }
            if initiating.contains(address) { continue }
            if var initiation = initiations[address] {
                if now - min(now, initiation.sentAt) >= configuration.retryInterval {
                    initiation.sentAt = now
                    initiations[address] = initiation
                    out.append((withCookieMAC(initiation.message, to: address, now: now), address))
                }
                continue
            }
            initiating.insert(address)
            let work = Work(
                kind: .initiate, address: address, staticPrivateKey: configuration.staticPrivateKey, staticPublicKey: staticPublicKey,
                prologue: configuration.prologue)
            if configuration.defersHandshakes {
                pendingWork.append(work)
            } else {
                out += apply(Self.perform(work), now: now)
            }
        }
        return out
    }

    /// Our message 3 for session `index` once more, when the peer has not confirmed the session
    /// for a retry interval (the message may have been lost).
    private mutating func repeatedFinish(_ index: UInt32, now: UInt64) -> [UInt8]? {
        guard let session = sessions[index], let finish = session.finishMessage,
              now - min(now, session.finishSentAt) >= configuration.retryInterval else { return nil }
        sessions[index]?.finishSentAt = now
        return finish
    }

    private mutating func expire(now: UInt64) {
        for (index, session) in sessions {
            let idle = now - min(now, session.lastReceived)
            let replacedFor = session.replacedAt.map { now - min(now, $0) } ?? 0
            let age = now - min(now, session.established)
            if idle >= configuration.idleTimeout || replacedFor >= configuration.replacedSessionGrace || age >= configuration.rejectAfter {
                drop(index)
            }
        }
        responses = responses.filter { now - min(now, $0.value.createdAt) < configuration.limits.halfOpenLifetime }
        untrustedUntil = untrustedUntil.filter { now < $0.value }
        knownBudgets = knownBudgets.filter { isKnown($0.key) }
        cookies = cookies.filter { now - min(now, $0.value.received) < configuration.cookieLifetime }
        if initiations.count > configuration.limits.sessions {
            for (address, initiation) in initiations where now - min(now, initiation.sentAt) > configuration.idleTimeout {
                initiations[address] = nil
            }
        }
    }

    /// The device key of the session `address` is sent to with, if there is one.
    public func remoteStaticKey(of address: Address) -> [UInt8]? {
        current[address].flatMap { sessions[$0]?.remoteStaticKey }
    }

    /// Stops trying to reach `address` (the peer left, or is no longer wanted).
    public mutating func forget(_ address: Address) {
        initiations[address] = nil
        initiating.remove(address)
        if let index = successors[address] { drop(index) }
        if let index = current[address] { drop(index) }
    }

    private mutating func drop(_ index: UInt32) {
        guard let session = sessions.removeValue(forKey: index) else { return }
        if current[session.address] == index { current[session.address] = nil }
        if successors[session.address] == index { successors[session.address] = nil }
    }

    // MARK: Inspection

    /// The frame of another protocol version noticed since the last call, if any (at most one
    /// per `versionNoticeInterval`), for a log line that tells the user to update a build.
    public mutating func takeVersionNotice() -> VersionNotice? {
        defer { versionNotice = nil }
        return versionNotice
    }

    /// The trusted key of the device each address's session is with.
    public var peers: [Address: [UInt8]] {
        current.compactMapValues { sessions[$0]?.remoteStaticKey }
    }

    public var sessionCount: Int { sessions.count }

    /// The keys of the session `address` is sent to with (for tests: that they are let go).
    func sessionKeyStorage(of address: Address) -> SecretBytes? {
        current[address].flatMap { sessions[$0]?.keys }
    }
    public var halfOpenCount: Int { responses.count }

    private mutating func freshIndex() -> UInt32 {
        while true {
            let index = UInt32.random(in: 1 ... .max)
            if sessions[index] == nil, responses[index] == nil, !initiations.values.contains(where: { $0.localIndex == index }) {
                return index
            }
        }
    }

    private static func slot(_ kind: SecureDatagram.TransportKind) -> Int { kind == .rtp ? 0 : 1 }
}

/// Every bound on what the encrypted channel keeps for strangers, in one place
/// (Docs/protocol.md lists them).
public struct SecurityLimits: Sendable {
    /// Handshakes answered per second, and in a burst: a flood of initiations costs at most this.
    public var handshakesPerSecond = 20.0
    public var handshakeBurst = 10.0
    /// Handshakes answered per second, and in a burst, to each address we have a session with
    /// or are calling, apart from strangers' budget: more than a peer's retries (4 a second).
    public var peerHandshakesPerSecond = 5.0
    public var peerHandshakeBurst = 5.0
    /// Handshakes waiting for their third message; the oldest is forgotten when full.
    public var halfOpenHandshakes = 16
    public var halfOpenLifetime: UInt64 = MediaTime.nanoseconds(.seconds(5))
    /// Sessions at once (peers, and the sessions being replaced by a rekey).
    public var sessions = 64
    /// Packets sealed under one key before the session must be renewed (far below 2^64 nonces).
    public var packetsPerKey: UInt64 = 1 << 48

    public init() {}
}

/// A token bucket over time passed in.
struct TokenBucket: Sendable {
    let perSecond: Double
    let burst: Double
    private var tokens: Double
    private var last: UInt64?

    init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
        tokens = burst
    }

    mutating func take(now: UInt64) -> Bool {
        if let last { tokens = min(burst, tokens + Double(now - min(now, last)) / 1e9 * perSecond) }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
