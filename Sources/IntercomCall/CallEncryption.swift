import IntercomCore
import IntercomIO
import IntercomSecurity

/// What makes a call private: this device's identity and the devices it trusts.
public struct CallSecurity: Sendable {
    public var identity: DeviceIdentity
    public var trustedDevices: TrustedDeviceStore
    /// How often the initiator of a session renews its keys (forward secrecy within a call).
    public var rekeyIntervalNanoseconds: UInt64 = 120_000_000_000

    public init(identity: DeviceIdentity, trustedDevices: TrustedDeviceStore) {
        self.identity = identity
        self.trustedDevices = trustedDevices
    }
}

/// The network thread's encryption: the secure channel, and the trusted list it reloads when
/// the file changes (a `pair` or `unpair` in another process takes effect within a second).
final class CallEncryption {
    private(set) var channel: SecureChannel<SocketAddress>
    private let security: CallSecurity
    private var stamp: FileStamp?
    /// Plain RTP or RTCP that reached an encrypted call.
    private var unencryptedPackets = 0

    init(_ security: CallSecurity) {
        self.security = security
        var configuration = SecureChannel<SocketAddress>.Configuration(staticPrivateKey: security.identity.privateKey)
        configuration.rekeyInterval = security.rekeyIntervalNanoseconds
        stamp = security.trustedDevices.stamp()
        channel = SecureChannel(configuration: configuration, isTrusted: Self.rule(security, (try? security.trustedDevices.trustedKeys()) ?? []))
    }

    /// Devices that share our identity (our own processes) are trusted without pairing.
    private static func rule(_ security: CallSecurity, _ trusted: Set<[UInt8]>) -> @Sendable ([UInt8]) -> Bool {
        let own = security.identity.publicKey
        return { key in key == own || trusted.contains(key) }
    }

    /// Reloads the trusted list if its file changed; sessions with devices no longer on it end.
    func reloadTrustIfChanged() {
        let current = security.trustedDevices.stamp()
        guard current != stamp else { return }
        // A list that cannot be read trusts nobody but ourselves until it can.
        let trusted = (try? security.trustedDevices.trustedKeys()) ?? []
        stamp = current
        channel.updateTrust(Self.rule(security, trusted))
    }

    func receive(_ bytes: ArraySlice<UInt8>, from address: SocketAddress, now: UInt64) -> SecureChannel<SocketAddress>.Received {
        channel.receive(bytes, from: address, now: now)
    }

    func seal(_ bytes: [UInt8], kind: SecureDatagram.TransportKind, to address: SocketAddress) -> [UInt8]? {
        channel.seal(bytes, kind: kind, to: address)
    }

    func maintain(wanted: [SocketAddress], now: UInt64) -> [(bytes: [UInt8], to: SocketAddress)] {
        channel.maintain(wanted: wanted, now: now)
    }

    func forget(_ address: SocketAddress) { channel.forget(address) }

    func refuseUnencrypted() { unencryptedPackets += 1 }

    var statistics: SecurityStatistics {
        let counters = channel.counters
        return SecurityStatistics(
            encrypted: true, authFailPackets: counters.authenticationFailures + unencryptedPackets, replayPackets: counters.replays,
            rateLimited: counters.rateLimited, rekeys: counters.rekeys, handshakes: counters.handshakes,
            untrustedHandshakes: counters.untrusted, badHandshakes: counters.badHandshakes, roams: counters.roams,
            fingerprint: Fingerprint(publicKey: security.identity.publicKey).description
        )
    }
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
    /// RTP packets not sent to a peer because its session was not up yet (the call's start).
    public var unsentNoSession = 0
    /// This device's fingerprint.
    public var fingerprint: String?

    public static let unencrypted = SecurityStatistics(encrypted: false)
}
