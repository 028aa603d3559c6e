/// Renders playout decisions to audio; the real implementation wraps an Opus decoder.
public protocol FrameDecoder: AnyObject {
    /// Renders one playout decision to 48 kHz mono samples in `output`, replacing what it held
    /// (exactly `samples` of them for conceal/FEC/silence; a decoded packet yields its own
    /// length). The caller keeps `output` from frame to frame, so that rendering need not allocate,
    /// and hands the decision over, so that a decoded packet's storage can be given back unshared.
    func render(_ decision: consuming PlayoutDecision, samples: Int, into output: inout [Float])

    /// Takes a payload the jitter buffer dropped without playing it (late, duplicate), so that
    /// its storage can be used again as a decoded one's is.
    func discard(_ payload: consuming [UInt8])
}

extension FrameDecoder {
    public func discard(_ payload: consuming [UInt8]) {}
}
