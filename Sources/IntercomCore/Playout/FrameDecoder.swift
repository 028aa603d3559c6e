/// Renders playout decisions to audio; the real implementation wraps an Opus decoder.
public protocol FrameDecoder: AnyObject {
    /// Renders one playout decision to 48 kHz mono samples (exactly `samples` of them for conceal/FEC/silence; a decoded packet yields its own length).
    func render(_ decision: PlayoutDecision, samples: Int) -> [Float]
}
