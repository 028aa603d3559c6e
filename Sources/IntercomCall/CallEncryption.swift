import Dispatch
import Glibc
import IntercomCore
import IntercomIO
import IntercomSecurity
import Logging
import Synchronization

/// What makes a call private: this device's identity and the devices it trusts.
public struct CallSecurity: Sendable {
    public var identity: DeviceIdentity
    public var trustedDevices: TrustedDeviceStore
    /// How often the initiator of a session renews its keys (forward secrecy within a call).
    public var rekeyInterval: Duration = .seconds(120)

    public init(identity: DeviceIdentity, trustedDevices: TrustedDeviceStore) {
        self.identity = identity
        self.trustedDevices = trustedDevices
    }
}

/// The network thread's encryption: the secure channel, which it alone touches, and a thread
/// of its own for what must not run on a real-time thread: the handshakes' Diffie–Hellman work
/// (handed over and back through two rings) and reading the trusted list when its file changes
/// (a `pair` or `unpair` in another process takes effect within a second).
final class CallEncryption {
    typealias Channel = SecureChannel<SocketAddress>
    private(set) var channel: Channel
    private let security: CallSecurity
    /// Our own key's fingerprint, for the statistics (made once: hashing and formatting allocate).
    private let fingerprint: String
    /// Plain RTP or RTCP that reached an encrypted call.
    private var unencryptedPackets = 0

    /// How often the handshake thread looks whether the trusted list changed (unpairing drops a device within 2 s).
    private static let trustCheckInterval: Duration = .seconds(1)

    private let work = SPSCRing<Channel.Work>(capacity: 64)
    private let results = SPSCRing<Channel.WorkResult>(capacity: 64)
    /// The paired devices by key, as the list changes.
    private let trustUpdates = SPSCRing<[[UInt8]: TrustedPeer]>(capacity: 4)
    /// Each paired device's name and how loud it plays here (`TrustedPeer`).
    private(set) var paired: [[UInt8]: TrustedPeer] = [:]
    /// Set when the trusted list is known to have changed (the status screen's volume keys):
    /// the handshake thread reads it at once rather than at its next look.
    private let trustedListChanged = SharedFlag()
    /// Frames of another protocol version, for the handshake thread to log (the network thread never logs).
    private let versionNotices = SPSCRing<Channel.VersionNotice>(capacity: 4)
    private let logger: Logger
    private let workArrived = DispatchSemaphore(value: 0)
    private let stopping = SharedFlag()
    private var worker: JoinableThread?
    private let wakeNetwork: @Sendable () -> Void

    init(_ security: CallSecurity, logger: Logger, wakeNetwork: @escaping @Sendable () -> Void) {
        self.security = security
        self.logger = logger
        self.wakeNetwork = wakeNetwork
        fingerprint = Fingerprint(publicKey: security.identity.publicKey).description
        var configuration = Channel.Configuration(staticPrivateKey: security.identity.privateKey)
        configuration.rekeyInterval = MediaTime.nanoseconds(security.rekeyInterval)
        // WireGuard's margin (renew at 120 s, refuse at 180 s) for a renewal interval set longer.
        configuration.rejectAfter = max(configuration.rejectAfter, MediaTime.nanoseconds(security.rekeyInterval + .seconds(60)))
        configuration.defersHandshakes = true
        configuration.host = { $0.host }
        paired = pairedDevices((try? security.trustedDevices.load()) ?? [])
        channel = Channel(configuration: configuration, isTrusted: Self.rule(security, Set(paired.keys)))
    }

    deinit { stop() }

    /// Devices that share our identity (our own processes) are trusted without pairing.
    private static func rule(_ security: CallSecurity, _ trusted: Set<[UInt8]>) -> @Sendable ([UInt8]) -> Bool {
        let own = security.identity.publicKey
        return { key in key == own || trusted.contains(key) }
    }

    /// Starts the handshake thread (an ordinary thread, never real-time).
    func start() throws {
        let (work, results, trustUpdates, workArrived, stopping, wakeNetwork, store) =
            (work, results, trustUpdates, workArrived, stopping, wakeNetwork, security.trustedDevices)
        let versionNotices = versionNotices
        let trustedListChanged = trustedListChanged
        let logger = logger
        let trustCheckInterval = MediaTime.nanoseconds(Self.trustCheckInterval)
        worker = try JoinableThread(name: "handshakes") {
            var stamp = store.stamp()
            var nextTrustCheck = SystemClock.monotonicNanoseconds()
            while !stopping.value.load(ordering: .relaxed) {
                _ = workArrived.wait(timeout: .now() + .milliseconds(250))
                while let item = work.pop() {
                    let result = Channel.perform(item)
                    // The network thread drains results every turn; wait for room rather than lose one.
                    while !results.push(result), !stopping.value.load(ordering: .relaxed) { usleep(1_000) }
                    wakeNetwork()
                }
                while let notice = versionNotices.pop() { logVersionNotice(notice, logger) }
                let now = SystemClock.monotonicNanoseconds()
                let told = trustedListChanged.value.exchange(false, ordering: .relaxed)
                guard now >= nextTrustCheck || told else { continue }
                nextTrustCheck = now + trustCheckInterval
                let current = store.stamp()
                // (A change within the file system's timestamp resolution keeps the stamp: told, it is read anyway.)
                guard current != stamp || told else { continue }
                // A list that cannot be read trusts nobody but ourselves until it can.
                if trustUpdates.push(pairedDevices((try? store.load()) ?? [])) {
                    stamp = current
                    wakeNetwork()
                } else if told {
                    trustedListChanged.value.store(true, ordering: .relaxed)
                }
            }
        }
    }

    /// Has the handshake thread read the trusted list now (from any thread).
    func readTrustedListNow() {
        trustedListChanged.value.store(true, ordering: .relaxed)
        workArrived.signal()
    }

    /// The gain a paired device's stream plays with (nil for our own processes' streams); a
    /// page plays at the device's volume even where it is muted.
    func listeningGain(of key: [UInt8], page: Bool = false) -> Float? {
        guard let listening = paired[key]?.listening else { return nil }
        return page ? PeerListening(volumePercent: listening.volumePercent, muted: false).gain : listening.gain
    }

    func stop() {
        stopping.value.store(true, ordering: .relaxed)
        workArrived.signal()
        worker?.join()
        worker = nil
    }

    /// Hands the channel's new handshake work to the other thread; work that finds no room is
    /// refused like a handshake over the rate limit.
    private func handOff() {
        for item in channel.takeWork() {
            if work.push(item) { workArrived.signal() } else { channel.abandon(item) }
        }
    }

    /// Takes in what the handshake thread finished and a changed trusted list (sessions with
    /// devices no longer on it end); returns the handshake messages to send.
    func collect(now: UInt64) -> [(bytes: [UInt8], to: SocketAddress)] {
        while let trusted = trustUpdates.pop() {
            let keysChanged = trusted.count != paired.count || trusted.keys.contains { paired[$0] == nil }
            paired = trusted
            // A changed volume only is not a changed trust: sessions are looked at again only for a changed list of keys.
            if keysChanged { channel.updateTrust(Self.rule(security, Set(trusted.keys))) }
        }
        var out: [(bytes: [UInt8], to: SocketAddress)] = []
        while let result = results.pop() { out += channel.apply(result, now: now) }
        return out
    }

    func receive(_ bytes: ArraySlice<UInt8>, from address: SocketAddress, now: UInt64) -> Channel.Received {
        defer { handOff() }
        let received = channel.receive(bytes, from: address, now: now)
        if case .dropped = received, let notice = channel.takeVersionNotice(), versionNotices.push(notice) { workArrived.signal() }
        return received
    }


    /// Seals into `datagram` (kept by the caller, so that sealing allocates nothing); false while there is no session.
    func seal(_ bytes: [UInt8], kind: SecureDatagram.TransportKind, to address: SocketAddress, into datagram: inout [UInt8]) -> Bool {
        channel.seal(bytes, kind: kind, to: address, into: &datagram)
    }

    func maintain(wanted: [SocketAddress], now: UInt64) -> [(bytes: [UInt8], to: SocketAddress)] {
        defer { handOff() }
        return channel.maintain(wanted: wanted, now: now)
    }

    func forget(_ address: SocketAddress) { channel.forget(address) }

    func refuseUnencrypted() { unencryptedPackets += 1 }

    var statistics: SecurityStatistics {
        let counters = channel.counters
        return SecurityStatistics(
            encrypted: true, authFailPackets: counters.authenticationFailures + unencryptedPackets, replayPackets: counters.replays,
            rateLimited: counters.rateLimited, rekeys: counters.rekeys, handshakes: counters.handshakes,
            untrustedHandshakes: counters.untrusted, badHandshakes: counters.badHandshakes, roams: counters.roams,
            cookieReplies: counters.cookieReplies, otherVersionPackets: counters.otherVersion, fingerprint: fingerprint
        )
    }
}

/// Why a peer of another build never joins. Only numbers are printed (the address and the
/// version byte): nothing the sender chose as text reaches the log.
/// What a call keeps of a paired device.
struct TrustedPeer: Equatable, Sendable {
    /// The name it was stored under at pairing, made safe to print: the name a peer shows,
    /// rather than the one its hello says (which it chooses, and may change).
    var name: String
    var listening: PeerListening
}

/// Each paired device by its key.
func pairedDevices(_ devices: [TrustedDevice]) -> [[UInt8]: TrustedPeer] {
    Dictionary(devices.compactMap { device in
        device.keyBytes.map { ($0, TrustedPeer(name: TerminalText.sanitized(device.name), listening: device.listening)) }
    }, uniquingKeysWith: { first, _ in first })
}

func logVersionNotice(_ notice: SecureChannel<SocketAddress>.VersionNotice, _ logger: Logger) {
    logger.warning("""
        peer \(notice.address) speaks protocol version \(notice.version), this build speaks \(SecureDatagram.version): \
        update one of them (they cannot call each other)
        """)
}

/// The `security` object of `--stats-json` and `intercom status --json`.
public struct SecurityStatistics: Codable, Sendable, Equatable {
    public var encrypted: Bool
    /// Packets dropped because they were not authentic: a bad tag, no session, or sent in the clear.
    public var authFailPackets = 0
    public var replayPackets = 0
    /// Handshakes refused because they came faster than the budget allows.
    public var rateLimited = 0
    public var rekeys = 0
    public var handshakes = 0
    /// Handshakes that finished with a device that is not paired.
    public var untrustedHandshakes = 0
    public var badHandshakes = 0
    public var roams = 0
    /// Initiations over the handshake budget answered with a cookie (a stranger's flood, or load).
    public var cookieReplies = 0
    /// Frames of another protocol version (a peer running an older or newer build), dropped.
    public var otherVersionPackets = 0
    /// RTP packets not sent to a peer because its session was not up yet (the call's start).
    public var unsentNoSession = 0
    /// This device's fingerprint.
    public var fingerprint: String?

    public static let unencrypted = SecurityStatistics(encrypted: false)
}
