import FoundationEssentials
import IntercomCore
import IntercomIO
import IntercomSecurity
import Logging

/// `intercom pair`: one pairing run over UDP, found by mDNS or given an address. The waiting
/// device prints a code and answers (`PairingResponder`); the joining one sends its hello to
/// the waiting device (`PairingInitiator`). When both were given the same code, each waits and
/// each looks: the one with the smaller fingerprint calls the other. Both store the other as
/// trusted only after the key is confirmed.
public final class PairingSession: Sendable {
    public struct Options: Sendable {
        /// The code; nil: make one (or use `waitingCode`), print it and wait.
        public var code: String?
        /// The code to wait with, made by the caller (a daemon that already told it). It is never
        /// passed to `say`: a daemon's `say` is its log, which others may read (adm, the journal).
        public var waitingCode: String?
        /// The device to call, without discovery.
        public var peer: SocketAddress?
        public var port: Int = 5004
        public var timeout: Duration = .seconds(120)
        public var name: String = defaultPeerName()
        public var discovery = true

        public init() {}
    }

    public enum Outcome: Equatable, Sendable {
        case paired(name: String, fingerprint: String)
        case wrongCode
        case timedOut
    }

    /// How often the joining device sends its hello, then its confirmation, again while no
    /// answer comes (a datagram may be lost either way).
    static let retryInterval: UInt64 = MediaTime.nanoseconds(.milliseconds(250))
    /// How long the waiting device stays after the exchange ended to answer a repeated
    /// confirmation (its answer may have been lost): eight of the joiner's retries.
    static let linger: UInt64 = MediaTime.nanoseconds(.seconds(2))

    private let identity: DeviceIdentity
    private let store: TrustedDeviceStore
    private let options: Options
    private let say: @Sendable (String) -> Void
    private let logger: Logger

    public init(identity: DeviceIdentity, store: TrustedDeviceStore, options: Options, logger: Logger, say: @escaping @Sendable (String) -> Void) {
        self.identity = identity
        self.store = store
        self.options = options
        self.logger = logger
        self.say = say
    }

    public func run() throws -> Outcome {
        let socket = try Self.bind(port: options.port)
        let poller = try Poller(watching: [socket])
        let start = SystemClock.monotonicNanoseconds()
        let deadline = start + MediaTime.nanoseconds(options.timeout)
        let ownFingerprint = Fingerprint(publicKey: identity.publicKey)
        let code = options.code ?? options.waitingCode ?? makePairingCode()
        let waitsOnly = options.code == nil
        // Only a code made here is told here; one the caller made, the caller has told the owner.
        if waitsOnly, options.waitingCode == nil { say("code: \(code)") }

        var responder = PairingResponder(code: code, staticKey: identity.publicKey, name: options.name, deadline: deadline)
        var initiator: (exchange: PairingInitiator, target: SocketAddress, sentAt: UInt64)?
        var discovery: ServiceDiscovery?
        if options.peer == nil, options.discovery {
            var generator = SystemRandomNumberGenerator()
            let announcement = try ServiceAnnouncement(
                name: options.name, port: socket.localPort, peerID: PeerID.random(using: &generator),
                fingerprint: ownFingerprint.description, pairing: waitsOnly ? .waiting : .withCode)
            discovery = try ServiceDiscovery(announcing: announcement, onEvent: { [logger] event in
                if case .daemonUnavailable(let error) = event { logger.warning("\(error); give the other device with --peer HOST:PORT") }
            })
        }
        defer { discovery?.stop() }
        say(waitsOnly
            ? "waiting \(options.timeout.components.seconds) s for a device to pair with this code (this device: \(ownFingerprint), port \(socket.localPort))"
            : "looking for the device to pair with (this device: \(ownFingerprint))")

        var buffer = [UInt8](repeating: 0, count: 1_500)
        // The waiting side's outcome once its exchange ended, kept until `linger` has passed.
        var ended: (outcome: Outcome, until: UInt64)?
        while true {
            let now = SystemClock.monotonicNanoseconds()
            if let ended, now >= ended.until { return ended.outcome }
            guard now < deadline || ended != nil else { return .timedOut }
            if ended == nil, let code = options.code, initiator == nil, let target = target(discovery: discovery, own: ownFingerprint) {
                initiator = (PairingInitiator(code: code, staticKey: identity.publicKey, name: options.name), target, 0)
            }
            if ended == nil, var current = initiator, now - min(now, current.sentAt) >= Self.retryInterval {
                // Repeated until the waiting device answers: the hello, then the confirmation.
                try? socket.send(current.exchange.outgoing, to: current.target)
                current.sentAt = now
                initiator = current
            }
            let until = ended?.until ?? deadline
            _ = try poller.wait(timeoutNanoseconds: min(until - min(until, now), MediaTime.nanoseconds(.milliseconds(100))))
            while let (count, from) = try socket.receive(into: &buffer) {
                let bytes = buffer[0..<count]
                let arrived = SystemClock.monotonicNanoseconds()
                if ended != nil {
                    // Only repeats of the confirmation that ended it are answered now.
                    if case .confirm? = PairingMessage(bytes), case .send(let reply) = responder.receive(bytes, now: arrived) {
                        try? socket.send(reply, to: from)
                    }
                    continue
                }
                if var current = initiator, from == current.target {
                    let event = current.exchange.receive(bytes)
                    initiator = current
                    switch event {
                    case .send(let reply):
                        try? socket.send(reply, to: from)
                        initiator?.sentAt = arrived
                        continue
                    case .paired(let device): return try store(device)
                    case .wrongCode: return .wrongCode
                    // Not for the initiator: the other device may be calling us as well.
                    case .ignored: break
                    }
                }
                switch responder.receive(bytes, now: arrived) {
                case .send(let reply):
                    try? socket.send(reply, to: from)
                case .paired(let device, let reply):
                    try? socket.send(reply, to: from)
                    ended = (try store(device), arrived + Self.linger)
                case .wrongCode(let reply, let left):
                    try? socket.send(reply, to: from)
                    say("a device at \(from) gave a wrong code; \(left) attempt\(left == 1 ? "" : "s") left")
                    if left == 0 { ended = (.wrongCode, arrived + Self.linger) }
                case .codeExhausted:
                    return responder.isExhausted ? .wrongCode : .timedOut
                case .ignored:
                    break
                }
            }
        }
    }

    /// Whom to call: the address given, else a device found waiting to pair. A device waiting
    /// with its own code (`pair=1`) is always called; one given a code too (`pair=2`) only when
    /// its fingerprint sorts after ours, so that exactly one of the two calls.
    private func target(discovery: ServiceDiscovery?, own: Fingerprint) -> SocketAddress? {
        if let peer = options.peer { return peer }
        guard let discovery else { return nil }
        let waiting = discovery.peers.filter { $0.isPairing && $0.fingerprint != own.description }
            .sorted { $0.firstSeenNanoseconds < $1.firstSeenNanoseconds }
        for peer in waiting {
            let callsUs = peer.pairing == .withCode && (peer.fingerprint ?? "") < own.description
            if !callsUs, let address = CallDiscovery.preferredAddress(of: peer) { return address }
        }
        return nil
    }

    private func store(_ device: PairedDevice) throws -> Outcome {
        // The exchange refuses our own key; this is the last word on it.
        guard device.publicKey != identity.publicKey else { throw PairingError.ownKey }
        try store.add(TrustedDevice(name: TerminalText.sanitized(device.name), publicKey: device.publicKey, pairedAt: Date()))
        return .paired(name: TerminalText.sanitized(device.name), fingerprint: Fingerprint(publicKey: device.publicKey).description)
    }

    /// The port asked for, or any free one when it is taken (a call may be running on it):
    /// discovery announces whichever it is.
    private static func bind(port: Int) throws -> UDPSocket {
        guard (0...65535).contains(port) else { throw CallError.invalidPort(port) }
        do {
            return try UDPSocket(port: UInt16(port))
        } catch {
            return try UDPSocket(port: 0)
        }
    }
}


public enum PairingError: Error, CustomStringConvertible {
    case ownKey

    public var description: String {
        switch self {
        case .ownKey: "the other device has this device's own key (the same state directory): there is nothing to pair"
        }
    }
}
