/// Keeps a mix strictly inside (-1, 1) without hard clipping.
///
/// A peak envelope (instant attack, slow release) drives the gain, so the gain changes slowly and
/// does not distort the waveform. Below `knee` the limiter is transparent; above it the envelope is
/// mapped through a smooth curve that approaches 1 but never reaches it.
public struct SoftLimiter: Sendable {
    /// Level up to which samples pass unchanged.
    public let knee: Float
    private let releaseFactor: Float
    private var envelope: Float = 0

    /// Creates a limiter; `releaseTime` (nanoseconds) is how long the gain takes to recover after a peak.
    public init(knee: Float = 0.8, releaseTime: UInt64 = MediaTime.nanoseconds(.milliseconds(50))) {
        self.knee = knee
        let releaseSamples = max(1, Float(MediaTime.samples(nanoseconds: Int64(releaseTime))))
        releaseFactor = 1 - 1 / releaseSamples
    }

    /// Limits `samples` in place.
    public mutating func process(_ samples: UnsafeMutableBufferPointer<Float>) {
        for index in samples.indices {
            // A broken decoder must not poison the whole mix.
            let sample = samples[index].isFinite ? samples[index] : 0
            envelope = max(abs(sample), envelope * releaseFactor)
            let gain = envelope > knee ? curve(envelope) / envelope : 1
            // The curve stays below 1; the clamp only catches rounding at absurd input levels.
            samples[index] = min(max(sample * gain, -1), 1)
        }
    }

    /// Identity up to the knee, then bends smoothly (continuous slope) towards 1 without reaching it.
    private func curve(_ level: Float) -> Float {
        let headroom = 1 - knee
        let overshoot = (level - knee) / headroom
        return knee + headroom * overshoot / (1 + overshoot)
    }
}
