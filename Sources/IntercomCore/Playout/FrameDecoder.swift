/// Renders playout decisions to audio; the real implementation wraps an Opus decoder.
public protocol FrameDecoder: AnyObject {
    /// Renders one playout decision to 48 kHz mono samples in `output`, replacing what it held
    /// (exactly `samples` of them for conceal/FEC/silence; a decoded packet yields its own
    /// length). The caller keeps `output` from frame to frame, so that rendering need not allocate.
    func render(_ decision: PlayoutDecision, samples: Int, into output: inout [Float])
}
