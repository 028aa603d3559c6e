/// A received packet waiting in the jitter buffer, with its counters unwrapped.
struct BufferedPacket: Sendable {
    let sequenceNumber: Int64
    let timestamp: Int64
    let marker: Bool
    let payload: [UInt8]
    /// What the packet's own header says it plays for (`OpusTableOfContents`); nil if it cannot tell.
    let samples: Int64?
}
