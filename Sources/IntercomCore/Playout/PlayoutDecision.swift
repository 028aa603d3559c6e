/// What the playout should render for the next source frame of one stream.
public enum PlayoutDecision: Equatable, Sendable {
    /// The frame arrived: decode it.
    case decode(payload: [UInt8])
    /// The frame is lost but the next packet is here: decode its in-band FEC for `samples` samples.
    case recoverWithFEC(nextPayload: [UInt8], samples: Int)
    /// The frame is lost and nothing can recover it: run packet-loss concealment for `samples` samples.
    case conceal(samples: Int)
    /// Nothing is being sent (DTX gap, before the first packet, stream idle): play `samples` of comfort silence.
    case comfortSilence(samples: Int)

    public var isDecode: Bool {
        if case .decode = self { return true }
        return false
    }
}
