import Atomics

/// What the network thread counts, readable from any thread without locks.
final class NetworkCounters: Sendable {
    let datagramsReceived = ManagedAtomic<Int>(0)
    let rtpReceived = ManagedAtomic<Int>(0)
    let rtcpReceived = ManagedAtomic<Int>(0)
    /// Dropped datagrams, by reason.
    let malformed = ManagedAtomic<Int>(0)
    let wrongVersion = ManagedAtomic<Int>(0)
    let wrongPayloadType = ManagedAtomic<Int>(0)
    let tooLarge = ManagedAtomic<Int>(0)
    let refusedPeer = ManagedAtomic<Int>(0)
    let unsupportedHello = ManagedAtomic<Int>(0)
    let inboxFull = ManagedAtomic<Int>(0)
    /// RTP packets of streams not (yet) validated by their sequence numbers.
    let unvalidated = ManagedAtomic<Int>(0)
    let ownPackets = ManagedAtomic<Int>(0)
    /// RTP packets with an SSRC that belongs to another peer (a hijack attempt, or a collision).
    let foreignSSRC = ManagedAtomic<Int>(0)
    /// Sent datagrams and bytes, RTP and RTCP together.
    let datagramsSent = ManagedAtomic<Int>(0)
    let bytesSent = ManagedAtomic<Int>(0)
    let sendErrors = ManagedAtomic<Int>(0)
    /// RTP packets not sent to a peer because its encrypted session was not up yet.
    let unsentNoSession = ManagedAtomic<Int>(0)
    let receiveErrors = ManagedAtomic<Int>(0)
}
