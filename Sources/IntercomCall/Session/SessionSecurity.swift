import IntercomCore
import IntercomSecurity

/// The encrypted side of a `CallSession`: the secure channel, the paired devices as the call
/// knows them, and what was refused. Pure: the handshakes' Diffie–Hellman work leaves through
/// `CallSessionOutput.perform` and comes back as `CallSession.handshakeFinished`, the trusted
/// list as `CallSession.trustChanged`.
struct SessionSecurity<Address: Hashable & Sendable> {
    typealias Channel = SecureChannel<Address>
    private(set) var channel: Channel
    private let ownKey: DeviceKey
    /// Each paired device's name and how loud it plays here (`TrustedPeer`).
    private(set) var paired: [DeviceKey: TrustedPeer]
    /// Our own key's fingerprint, for the statistics (made once: hashing and formatting allocate).
    private let fingerprint: String
    /// Plain RTP or RTCP that reached an encrypted call.
    private var unencryptedPackets = 0

    /// `host` tells the ports of one host apart from other hosts (`SecureChannel.Configuration.host`).
    init(
        publicKey: DeviceKey, privateKey: SecretBytes, rekeyInterval: Duration, paired: [DeviceKey: TrustedPeer],
        host: @escaping @Sendable (Address) -> String
    ) {
        ownKey = publicKey
        self.paired = paired
        fingerprint = publicKey.fingerprint.description
        var configuration = Channel.Configuration(staticPrivateKey: privateKey)
        configuration.rekeyInterval = MediaTime.nanoseconds(rekeyInterval)
        // WireGuard's margin (renew at 120 s, refuse at 180 s) for a renewal interval set longer.
        configuration.rejectAfter = max(configuration.rejectAfter, MediaTime.nanoseconds(rekeyInterval + .seconds(60)))
        configuration.defersHandshakes = true
        configuration.host = host
        channel = Channel(configuration: configuration, isTrusted: Self.rule(ownKey: ownKey, Set(paired.keys)))
    }

    /// Devices that share our identity (our own processes) are trusted without pairing.
    private static func rule(ownKey: DeviceKey, _ trusted: Set<DeviceKey>) -> @Sendable ([UInt8]) -> Bool {
        { key in key == ownKey.bytes || trusted.contains(DeviceKey(key)) }
    }

    /// Whether `key` is this device's own (another process of ours).
    func isOwn(_ key: DeviceKey) -> Bool { key == ownKey }

    /// The device key of the session at `address`, once its handshake proved it.
    func remoteKey(of address: Address) -> DeviceKey? { channel.remoteStaticKey(of: address).map(DeviceKey.init) }

    /// Whether there is a session to send on at `address`.
    func canSend(to address: Address) -> Bool { channel.canSend(to: address) }

    /// A new trusted list: sessions with devices no longer on it end. A changed volume only is
    /// not a changed trust: sessions are looked at again only for a changed list of keys.
    mutating func trustChanged(_ trusted: [DeviceKey: TrustedPeer]) {
        let keysChanged = trusted.count != paired.count || trusted.keys.contains { paired[$0] == nil }
        paired = trusted
        if keysChanged { channel.updateTrust(Self.rule(ownKey: ownKey, Set(trusted.keys))) }
    }

    /// The gain a paired device's stream plays with (nil for our own processes' streams); a
    /// page plays at the device's volume even where it is muted.
    func listeningGain(of key: DeviceKey, page: Bool) -> Float? {
        guard let listening = paired[key]?.listening else { return nil }
        return page ? PeerListening(volumePercent: listening.volumePercent, muted: false).gain : listening.gain
    }

    mutating func receive<Output: CallSessionOutput>(
        _ bytes: ArraySlice<UInt8>, from address: Address, now: UInt64, output: inout Output
    ) -> Channel.Received where Output.Address == Address {
        defer { handOff(&output) }
        let received = channel.receive(bytes, from: address, now: now)
        if case .dropped = received, let notice = channel.takeVersionNotice() { output.note(notice) }
        return received
    }

    /// Starts, repeats and renews handshakes with the peers in `wanted`.
    mutating func maintain<Output: CallSessionOutput>(wanted: [Address], now: UInt64, output: inout Output) where Output.Address == Address {
        for (datagram, destination) in channel.maintain(wanted: wanted, now: now) { output.send(datagram, to: destination) }
        handOff(&output)
    }

    /// A handshake step done elsewhere: the messages it makes go out.
    mutating func apply<Output: CallSessionOutput>(_ result: Channel.WorkResult, now: UInt64, output: inout Output) where Output.Address == Address {
        for (datagram, destination) in channel.apply(result, now: now) { output.send(datagram, to: destination) }
        handOff(&output)
    }

    /// Hands the channel's new handshake work out; work that finds no room is refused like a
    /// handshake over the rate limit.
    private mutating func handOff<Output: CallSessionOutput>(_ output: inout Output) where Output.Address == Address {
        for item in channel.takeWork() where !output.perform(item) { channel.abandon(item) }
    }

    /// Seals into `datagram` (kept by the caller, so that sealing allocates nothing); false while there is no session.
    mutating func seal(_ bytes: [UInt8], kind: SecureDatagram.TransportKind, to address: Address, into datagram: inout [UInt8]) -> Bool {
        channel.seal(bytes, kind: kind, to: address, into: &datagram)
    }

    mutating func forget(_ address: Address) { channel.forget(address) }

    mutating func refuseUnencrypted() { unencryptedPackets += 1 }

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

/// What a call keeps of a paired device.
struct TrustedPeer: Equatable, Sendable {
    /// The name it was stored under at pairing, made safe to print: the name a peer shows,
    /// rather than the one its hello says (which it chooses, and may change).
    var name: String
    var listening: PeerListening
}
