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

    /// Not a packet: the source said goodbye or left, and its stream stops playing now.
    var isGoodbye: Bool { payload.isEmpty }

    static func goodbye(ssrc: UInt32) -> ReceivedPacket {
        ReceivedPacket(ssrc: ssrc, sequenceNumber: 0, timestamp: 0, marker: false, payload: [], arrivalTime: 0)
    }
}
