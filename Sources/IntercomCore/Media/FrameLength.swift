/// How long one frame of audio lasts: a device period, an Opus frame, a block of the echo
/// canceller. Counted in samples at the voice's 48 kHz, so that a count of samples at another
/// rate, or a count of milliseconds, cannot pass for one.
public struct FrameLength: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Samples at `VoiceFormat.sampleRate`.
    public let samples: Int

    public init(samples: Int) {
        precondition(samples > 0, "a frame holds at least one sample")
        self.samples = samples
    }

    /// A frame of whole milliseconds.
    public static func milliseconds(_ milliseconds: Int) -> FrameLength {
        FrameLength(samples: VoiceFormat.samples(milliseconds: milliseconds))
    }

    public var duration: Duration { .nanoseconds(Int64(nanoseconds)) }
    public var nanoseconds: UInt64 { MediaTime.nanoseconds(frames: samples, rate: VoiceFormat.sampleRate) }
    public var milliseconds: Double { Double(samples) / Double(VoiceFormat.samplesPerMillisecond) }
    /// Samples of this length at another rate (a device's, the canceller's).
    public func samples(atRate rate: Int) -> Int { samples * rate / VoiceFormat.sampleRate }

    public static func < (a: FrameLength, b: FrameLength) -> Bool { a.samples < b.samples }

    public var description: String { "\(milliseconds) ms" }
}
