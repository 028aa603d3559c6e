/// A received packet waiting in the jitter buffer, with its counters unwrapped.
struct BufferedPacket: Sendable {
    let sequenceNumber: Int64
    let timestamp: Int64
    let marker: Bool
    let payload: [UInt8]
}
