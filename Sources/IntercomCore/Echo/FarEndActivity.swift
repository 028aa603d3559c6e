/// Whether the far end has been heard on our speaker recently: from the first loud enough
/// reference frame until `hangover` after the last one, long enough for its echo to die away.
///
/// While it is active, whatever the microphone picks up may be echo, so gain control must not
/// raise the level: it would lift the canceller's residual back to audible.
public struct FarEndActivity: Sendable {
    /// Frames quieter than this (RMS, 16-bit units; 100 is about -50 dBFS) count as silence.
    public let threshold: Double
    public let hangoverSamples: Int
    private var samplesSinceActive: Int

    public init(threshold: Double = 100, hangoverMilliseconds: Int = 300, sampleRate: Int = VoiceFormat.sampleRate) {
        self.threshold = threshold
        hangoverSamples = MediaTime.samples(milliseconds: hangoverMilliseconds, rate: sampleRate)
        samplesSinceActive = hangoverSamples
    }

    /// Takes the next reference frame; returns whether the far end is active.
    public mutating func update(reference: [Int16]) -> Bool {
        let energy = reference.reduce(0.0) { $0 + Double($1) * Double($1) }
        let rms = reference.isEmpty ? 0 : (energy / Double(reference.count)).squareRoot()
        samplesSinceActive = rms >= threshold ? 0 : min(hangoverSamples, samplesSinceActive + reference.count)
        return isActive
    }

    public var isActive: Bool { samplesSinceActive < hangoverSamples }
}
