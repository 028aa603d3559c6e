import Synchronization

/// What the network thread counts, readable from any thread without locks.
final class NetworkCounters: Sendable {
    let datagramsReceived = Atomic<Int>(0)
    /// Datagrams accepted as RTP (handed to the playback thread) and as RTCP.
    let rtpReceived = Atomic<Int>(0)
    let rtcpReceived = Atomic<Int>(0)
    /// Dropped datagrams, by reason.
    let malformed = Atomic<Int>(0)
    let wrongVersion = Atomic<Int>(0)
    let wrongPayloadType = Atomic<Int>(0)
    let tooLarge = Atomic<Int>(0)
    let refusedPeer = Atomic<Int>(0)
    let unsupportedHello = Atomic<Int>(0)
    let inboxFull = Atomic<Int>(0)
    /// RTP packets of streams not (yet) validated by their sequence numbers.
    let unvalidated = Atomic<Int>(0)
    /// RTP packets with our own SSRC: our stream coming back to us.
    let ownPackets = Atomic<Int>(0)
    /// Pages not played because this device refuses them (`--no-pages`).
    let pagesRefused = Atomic<Int>(0)
    /// RTP packets with an SSRC that belongs to another peer (a hijack attempt, or a collision).
    let foreignSSRC = Atomic<Int>(0)
    /// Sent datagrams and bytes, RTP and RTCP together.
    let datagramsSent = Atomic<Int>(0)
    let bytesSent = Atomic<Int>(0)
    /// Datagrams the socket refused to send.
    let sendErrors = Atomic<Int>(0)
    /// RTP packets not sent to a peer because its encrypted session was not up yet.
    let unsentNoSession = Atomic<Int>(0)
    /// Socket errors on receiving (not the datagram's fault).
    let receiveErrors = Atomic<Int>(0)
}
