import IntercomCore
import IntercomSecurity

/// What a `CallSession` does to the world, done by whoever runs it: the network thread's
/// socket and rings in a call (`NetworkLoop`), a simulated network in tests. Called while an
/// event is handled; a slice handed over is only valid during the call.
protocol CallSessionOutput<Address> {
    associatedtype Address: Hashable & Sendable
    /// Sends a datagram as it stands (already sealed in an encrypted call).
    mutating func send(_ datagram: [UInt8], to destination: Address)
    /// Hands an RTP packet's payload to the playback side; false when it has no room.
    mutating func play(_ packet: RTPHeader, payload: ArraySlice<UInt8>, arrival: UInt64, gain: Float?, isPage: Bool) -> Bool
    /// The source stops playing at once (its goodbye, its silence, its peer gone); false when there is no room.
    mutating func stopPlaying(_ ssrc: UInt32) -> Bool
    /// Hands a handshake's Diffie–Hellman work to where it may run (never the network thread);
    /// false when there is no room, and the handshake is refused.
    mutating func perform(_ work: SecureChannel<Address>.Work) -> Bool
    /// A frame of another protocol version, for the log (which the network thread never writes).
    mutating func note(_ notice: SecureChannel<Address>.VersionNotice)
    /// The worst link the peers report and the listeners, for the encoder's protection and bitrate.
    mutating func linkReported(_ feedback: LinkFeedback)
    /// The peers and link figures for displays and the stats file; `waiting` at the end of
    /// the call, else false when a reader holds them (tried again at the next turn).
    mutating func publish(_ figures: NetworkFigures, waiting: Bool) -> Bool
}

/// The clocks an event is stamped with: monotonic nanoseconds for every decision (the core's
/// tables count in them), and the wall clock only for what RTCP carries (NTP timestamps).
struct SessionTime: Sendable {
    var monotonic: UInt64
    var wall: WallClockTime
}

/// What our own stream has sent so far, as sender reports tell it, and whether we talk.
struct SentFigures: Sendable {
    var talking = false
    var rtpTimestamp: UInt32 = 0
    var packets: UInt32 = 0
    var octets: UInt32 = 0
}

/// The worst loss and jitter the peers still in the call report of our stream, and how many
/// devices our stream goes to now (`ListenerBudget`).
struct LinkFeedback: Equatable, Sendable {
    var lossPermille: Int
    var jitterMicroseconds: Int
    var listeners: Int
}

/// Who owns a stream we hear: in an encrypted call the device key of the session it came in
/// (which only an authenticated packet may move to a new address), in a plain call the
/// address it comes from.
enum StreamOwner<Address: Hashable & Sendable>: Hashable, Sendable {
    case device(DeviceKey)
    case address(Address)

    var deviceKey: DeviceKey? {
        if case .device(let key) = self { return key }
        return nil
    }
}

/// The network side's figures as a session publishes them (`NetworkSnapshot.update`).
struct NetworkFigures {
    var peers: [PeerSnapshot]
    var security: SecurityStatistics
    var devicesSeen: Set<DeviceKey>
    /// The target in force, and how many peers it reaches now.
    var target: CallTarget
    var reaches: Int
}
