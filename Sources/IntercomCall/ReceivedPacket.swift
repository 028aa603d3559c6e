import IntercomCore

/// An RTP packet as it crosses from the network thread to the playback thread.
struct ReceivedPacket: Sendable {
    let ssrc: UInt32
    let sequenceNumber: UInt16
    let timestamp: UInt32
    let marker: Bool
    let payload: [UInt8]
    /// Monotonic nanoseconds at which the datagram was read.
    let arrivalTime: UInt64
}
