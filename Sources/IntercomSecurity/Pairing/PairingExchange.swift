import IntercomCore

/// What pairing puts on the wire, one message a datagram. The first byte is a type in
/// 0x21…0x25 (never RTP, RTCP or a call's frame), then the version (1) and two zero bytes,
/// then a 16-byte session id chosen by the initiator:
///
/// - hello (0x21), initiator → waiting device: its CPace share Ya, its static key, its name;
///   zero-padded to `PairingMessage.helloLength`, so that no answer is ever longer;
/// - reply (0x22): the waiting device's share Yb, static key and name;
/// - confirm (0x23): the initiator's confirmation tag;
/// - accepted (0x24): the waiting device's tag; or rejected (0x25): the code was wrong.
///
/// Each side's static key and name are its CPace associated data (ADa, ADb), so the key
/// that both confirm is bound to both devices' keys: a man in the middle without the code can
/// neither finish nor swap a key.
public enum PairingMessage: Equatable, Sendable {
    case hello(session: [UInt8], share: [UInt8], staticKey: [UInt8], name: String)
    case reply(session: [UInt8], share: [UInt8], staticKey: [UInt8], name: String)
    case confirm(session: [UInt8], tag: [UInt8])
    case accepted(session: [UInt8], tag: [UInt8])
    case rejected(session: [UInt8])

    public static let version: UInt8 = 1
    public static let sessionBytes = 16
    public static let tagBytes = 32
    public static let maximumNameBytes = 64
    /// The hello's fixed length: at least as long as the longest reply.
    public static let helloLength = 4 + sessionBytes + 32 + 32 + 1 + maximumNameBytes

    public static func isPairing(_ bytes: some Collection<UInt8>) -> Bool {
        guard let first = bytes.first else { return false }
        return (0x21...0x25).contains(first)
    }

    public init?(_ bytes: ArraySlice<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count >= 4 + Self.sessionBytes, bytes[1] == Self.version, bytes[2] == 0, bytes[3] == 0 else { return nil }
        let session = Array(bytes[4..<20])
        let body = Array(bytes[20...])
        switch bytes[0] {
        case 0x21, 0x22:
            guard body.count >= 65, bytes[0] != 0x21 || bytes.count == Self.helloLength else { return nil }
            let nameLength = Int(body[64])
            guard nameLength <= Self.maximumNameBytes, body.count >= 65 + nameLength else { return nil }
            guard bytes[0] == 0x21 || body.count == 65 + nameLength else { return nil }
            let share = Array(body[0..<32]), key = Array(body[32..<64])
            let name = String(decoding: body[65..<(65 + nameLength)], as: UTF8.self)
            self = bytes[0] == 0x21
                ? .hello(session: session, share: share, staticKey: key, name: name)
                : .reply(session: session, share: share, staticKey: key, name: name)
        case 0x23, 0x24:
            guard body.count == Self.tagBytes else { return nil }
            self = bytes[0] == 0x23 ? .confirm(session: session, tag: body) : .accepted(session: session, tag: body)
        case 0x25:
            guard body.isEmpty else { return nil }
            self = .rejected(session: session)
        default:
            return nil
        }
    }

    public func serialized() -> [UInt8] {
        func header(_ type: UInt8, _ session: [UInt8]) -> [UInt8] { [type, Self.version, 0, 0] + session }
        func named(_ type: UInt8, _ session: [UInt8], _ share: [UInt8], _ key: [UInt8], _ name: String) -> [UInt8] {
            let nameBytes = Array(Self.truncated(name).utf8)
            return header(type, session) + share + key + [UInt8(nameBytes.count)] + nameBytes
        }
        switch self {
        case .hello(let session, let share, let key, let name):
            let unpadded = named(0x21, session, share, key, name)
            return unpadded + [UInt8](repeating: 0, count: Self.helloLength - unpadded.count)
        case .reply(let session, let share, let key, let name):
            return named(0x22, session, share, key, name)
        case .confirm(let session, let tag): return header(0x23, session) + tag
        case .accepted(let session, let tag): return header(0x24, session) + tag
        case .rejected(let session): return header(0x25, session)
        }
    }

    /// A name cut to at most 64 bytes of UTF-8, on a character boundary.
    static func truncated(_ name: String) -> String {
        var result = ""
        for character in name {
            guard result.utf8.count + String(character).utf8.count <= maximumNameBytes else { break }
            result.append(character)
        }
        return result
    }
}

/// The other device, once both sides have confirmed the key: the caller stores it as trusted.
public struct PairedDevice: Equatable, Sendable {
    public let publicKey: [UInt8]
    public let name: String

    public init(publicKey: [UInt8], name: String) {
        self.publicKey = publicKey
        self.name = name
    }
}

/// The pieces both roles share: the channel identifier, the associated data, the tags.
enum PairingTranscript {
    static let channel = Array("intercom pairing v1".utf8)

    static func associatedData(staticKey: [UInt8], name: String) -> [UInt8] {
        CPace.lengthValueConcatenation([staticKey, Array(PairingMessage.truncated(name).utf8)])
    }

    /// Key confirmation: a MAC of each role under the ISK (read where it is kept), told apart by label.
    static func tag(_ sessionKey: SecretBytes, role: String) -> [UInt8] {
        Array(Sodium.hmacSHA512(key: sessionKey, Array("intercom pairing confirm \(role)".utf8)).prefix(PairingMessage.tagBytes))
    }
}

/// The device that calls a waiting one (`intercom pair --code`): sends the hello, checks the
/// reply, confirms, and learns whether the code was right.
public struct PairingInitiator: Sendable {
    public enum Event: Equatable, Sendable {
        /// Send this to the waiting device.
        case send([UInt8])
        case paired(PairedDevice)
        /// The waiting device refused our confirmation, or its own did not verify.
        case wrongCode
        /// Not ours, or malformed: ignored.
        case ignored
    }

    public let session: [UInt8]
    private let party: CPace.Party
    private let staticKey: [UInt8]
    private let name: String
    /// The ISK is in guarded memory, freed (zeroed) with this initiator.
    private var pending: (sessionKey: SecretBytes, device: PairedDevice, confirm: [UInt8])?
    public private(set) var hello: [UInt8]

    /// What to send (again) while no answer has come: the hello until the reply, then the
    /// confirmation until `accepted` or `rejected`. Either may be lost on its way, or its
    /// answer on the way back; the waiting device answers a repeat as it answered the first.
    public var outgoing: [UInt8] { pending?.confirm ?? hello }

    public init(code: String, staticKey: [UInt8], name: String, session: [UInt8] = Sodium.randomBytes(PairingMessage.sessionBytes)) {
        self.session = session
        self.staticKey = staticKey
        self.name = PairingMessage.truncated(name)
        party = CPace.Party(code: Array(code.utf8), channel: PairingTranscript.channel, session: session)
        hello = PairingMessage.hello(session: session, share: party.share, staticKey: staticKey, name: self.name).serialized()
    }

    public mutating func receive(_ bytes: ArraySlice<UInt8>) -> Event {
        guard let message = PairingMessage(bytes) else { return .ignored }
        switch message {
        case .reply(let session, let share, let peerKey, let peerName) where session == self.session:
            // Only the first reply: each one would let its sender test one guess against our tag.
            // Our own key is no device to pair with (our hello sent back to us, or a device
            // that shares our identity): it is trusted already, and storing it means nothing.
            guard pending == nil, peerKey.count == 32, peerKey != staticKey, let key = party.sessionKey(
                peerShare: share, isInitiator: true,
                ownData: PairingTranscript.associatedData(staticKey: staticKey, name: name),
                peerData: PairingTranscript.associatedData(staticKey: peerKey, name: peerName))
            else { return .ignored }
            let confirm = PairingMessage.confirm(session: session, tag: PairingTranscript.tag(key, role: "initiator")).serialized()
            pending = (key, PairedDevice(publicKey: peerKey, name: peerName), confirm)
            return .send(confirm)
        case .accepted(let session, let tag) where session == self.session:
            guard let pending else { return .ignored }
            return Sodium.constantTimeEqual(tag, PairingTranscript.tag(pending.sessionKey, role: "responder"))
                ? .paired(pending.device) : .wrongCode
        case .rejected(let session) where session == self.session:
            return pending == nil ? .ignored : .wrongCode
        default:
            return .ignored
        }
    }
}

/// The device that waits with a code (`intercom pair`): answers hellos, checks confirmations,
/// and gives up on the code after three wrong ones or when it expires.
public struct PairingResponder: Sendable {
    public enum Event: Equatable, Sendable {
        /// Answer the sender with this.
        case send([UInt8])
        /// Paired; send `reply` (the confirmation of our side) to the sender.
        case paired(PairedDevice, reply: [UInt8])
        /// A wrong code: `reply` tells the sender; `attemptsLeft` more are allowed.
        case wrongCode(reply: [UInt8], attemptsLeft: Int)
        /// The code has had its three wrong attempts (or has expired): nothing more is answered.
        case codeExhausted
        case ignored
    }

    public static let maximumWrongAttempts = 3
    /// Hellos being answered at once; the oldest is forgotten beyond this.
    public static let maximumHalfOpen = 8

    private let code: [UInt8]
    private let staticKey: [UInt8]
    private let name: String
    private let deadline: UInt64
    public private(set) var wrongAttempts = 0

    private struct Exchange: Sendable {
        let reply: [UInt8]
        /// The ISK, in guarded memory: freed (zeroed) when the exchange ends or is let go.
        let sessionKey: SecretBytes
        let device: PairedDevice
        let started: UInt64
    }

    private var exchanges: [[UInt8]: Exchange] = [:]
    /// Exchanges that ended, with the confirmation that ended them and our answer to it, so
    /// that a repeat of it (our answer was lost) gets the same answer, as often as it comes,
    /// and counts as no new attempt. As many as `maximumHalfOpen`, the oldest let go.
    private var finished: [[UInt8]: (tag: [UInt8], answer: [UInt8], at: UInt64)] = [:]

    /// `deadline`: monotonic nanoseconds after which the code is dead.
    public init(code: String, staticKey: [UInt8], name: String, deadline: UInt64) {
        self.code = Array(code.utf8)
        self.staticKey = staticKey
        self.name = PairingMessage.truncated(name)
        self.deadline = deadline
    }

    public var isExhausted: Bool { wrongAttempts >= Self.maximumWrongAttempts }

    public mutating func receive(_ bytes: ArraySlice<UInt8>, now: UInt64) -> Event {
        // A repeated confirmation of an exchange that ended gets the answer it got, whatever
        // has happened since: the first answer was lost, and answering again tells nothing new.
        if case .confirm(let session, let tag)? = PairingMessage(bytes), let ended = finished[session] {
            return Sodium.constantTimeEqual(tag, ended.tag) ? .send(ended.answer) : .ignored
        }
        guard !isExhausted, now < deadline else { return .codeExhausted }
        guard let message = PairingMessage(bytes) else { return .ignored }
        switch message {
        case .hello(let session, let share, let peerKey, let peerName):
            // A repeated hello gets the same answer, so a lost reply costs nothing.
            if let existing = exchanges[session] { return .send(existing.reply) }
            if finished[session] != nil { return .ignored }
            let party = CPace.Party(code: code, channel: PairingTranscript.channel, session: session)
            // Our own key is no device to pair with (our own hello, or one that shares our identity).
            guard peerKey.count == 32, peerKey != staticKey, let key = party.sessionKey(
                peerShare: share, isInitiator: false,
                ownData: PairingTranscript.associatedData(staticKey: staticKey, name: name),
                peerData: PairingTranscript.associatedData(staticKey: peerKey, name: peerName))
            else { return .ignored }
            if exchanges.count >= Self.maximumHalfOpen, let oldest = exchanges.min(by: { $0.value.started < $1.value.started })?.key {
                exchanges[oldest] = nil
            }
            let reply = PairingMessage.reply(session: session, share: party.share, staticKey: staticKey, name: name).serialized()
            exchanges[session] = Exchange(reply: reply, sessionKey: key, device: PairedDevice(publicKey: peerKey, name: peerName), started: now)
            return .send(reply)
        case .confirm(let session, let tag):
            // One confirmation per hello: a wrong one ends the exchange.
            guard let exchange = exchanges.removeValue(forKey: session) else { return .ignored }
            guard Sodium.constantTimeEqual(tag, PairingTranscript.tag(exchange.sessionKey, role: "initiator")) else {
                wrongAttempts += 1
                let rejected = PairingMessage.rejected(session: session).serialized()
                remember(session, tag: tag, answer: rejected, now: now)
                return .wrongCode(reply: rejected, attemptsLeft: Self.maximumWrongAttempts - wrongAttempts)
            }
            let accepted = PairingMessage.accepted(
                session: session, tag: PairingTranscript.tag(exchange.sessionKey, role: "responder")).serialized()
            remember(session, tag: tag, answer: accepted, now: now)
            return .paired(exchange.device, reply: accepted)
        default:
            return .ignored
        }
    }

    public var halfOpenCount: Int { exchanges.count }

    private mutating func remember(_ session: [UInt8], tag: [UInt8], answer: [UInt8], now: UInt64) {
        if finished.count >= Self.maximumHalfOpen, let oldest = finished.min(by: { $0.value.at < $1.value.at })?.key {
            finished[oldest] = nil
        }
        finished[session] = (tag, answer, now)
    }
}

/// A fresh pairing code: six digits, uniform over 000000–999999.
public func makePairingCode() -> String {
    let value = Sodium.randomUniform(below: 1_000_000)
    let digits = String(value)
    return String(repeating: "0", count: 6 - digits.count) + digits
}
