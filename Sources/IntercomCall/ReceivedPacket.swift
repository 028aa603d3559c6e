import IntercomCore

/// An RTP packet as it crosses from the network thread to the playback thread.
struct ReceivedPacket: Sendable {
    let ssrc: UInt32
    let sequenceNumber: UInt16
    let timestamp: UInt32
    let marker: Bool
    private(set) var payload: [UInt8]
    /// Monotonic nanoseconds at which the datagram was read.
    let arrivalTime: UInt64
    /// The gain its stream plays with, for a paired device (remembered with it); nil leaves
    /// the stream's gain as it is.
    var gain: Float? = nil
    /// Sent as a page (`CallConfiguration.pagePayloadType`).
    var isPage = false

    /// Moves the payload out, leaving none: whoever takes it holds its storage alone, so that
    /// storage can go back to the network thread (`RecyclingRing`) and be refilled without a copy.
    mutating func takePayload() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &payload)
        return taken
    }

    /// Not a packet: the source said goodbye or left, and its stream stops playing now.
    var isGoodbye: Bool { payload.isEmpty }

    static func goodbye(ssrc: UInt32) -> ReceivedPacket {
        ReceivedPacket(ssrc: ssrc, sequenceNumber: 0, timestamp: 0, marker: false, payload: [], arrivalTime: 0)
    }

    /// Storage for a datagram or payload: room for a 10 ms frame at the highest bitrate the
    /// encoder is given (510 kb/s, about 640 bytes); a longer one grows its buffer once.
    static func spareStorage() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(768)
        return bytes
    }

    /// Not a packet: a payload the playback thread has decoded, given back to the network
    /// thread to be filled with another (`RecyclingRing`), so that receiving allocates nothing.
    static func spare(_ payload: [UInt8]) -> ReceivedPacket {
        ReceivedPacket(ssrc: 0, sequenceNumber: 0, timestamp: 0, marker: false, payload: payload, arrivalTime: 0)
    }
}
