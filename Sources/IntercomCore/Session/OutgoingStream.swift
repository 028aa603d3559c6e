/// The RTP numbering of what this peer sends: one SSRC, a sequence number per packet, and
/// a timestamp that runs on with the audio clock even while nothing is sent, so that the
/// receiver can tell a pause (timestamp jump) from a loss (sequence gap).
public struct OutgoingStream: Sendable {
    public let ssrc: UInt32
    private var nextSequenceNumber: UInt16
    private var nextTimestamp: UInt32
    private var sentLastFrame = false

    /// Packets and payload bytes sent, for RTCP sender reports.
    public private(set) var packetCount: UInt32 = 0
    public private(set) var octetCount: UInt32 = 0
    /// The RTP timestamp of the most recent frame, sent or not.
    public private(set) var lastTimestamp: UInt32

    /// Header fields of one outgoing packet.
    public struct Header: Equatable, Sendable {
        public let sequenceNumber: UInt16
        public let timestamp: UInt32
        /// Set on the first packet of a talkspurt.
        public let marker: Bool
    }

    /// Random starting points, as RFC 3550 asks, come from the caller's generator.
    public init(using generator: inout some RandomNumberGenerator) {
        ssrc = UInt32.random(in: 0...UInt32.max, using: &generator)
        nextSequenceNumber = UInt16.random(in: 0...UInt16.max, using: &generator)
        nextTimestamp = UInt32.random(in: 0...UInt32.max, using: &generator)
        lastTimestamp = nextTimestamp
    }

    /// Accounts for one encoded frame of `samples` (frames may change length from one to the
    /// next). Returns the header to send it with, or nil when `send` is false (silence, talk
    /// key up, DTX).
    public mutating func nextFrame(samples: Int, send: Bool, payloadBytes: Int) -> Header? {
        defer {
            lastTimestamp = nextTimestamp
            nextTimestamp &+= UInt32(samples)
            sentLastFrame = send
        }
        guard send else { return nil }
        let header = Header(sequenceNumber: nextSequenceNumber, timestamp: nextTimestamp, marker: !sentLastFrame)
        nextSequenceNumber &+= 1
        packetCount &+= 1
        octetCount &+= UInt32(payloadBytes)
        return header
    }
}
