import IntercomCore

/// Plays into nothing, at the real-time rate: for peers that only talk.
public final class NullSink: AudioSink {
    private var pacer: FramePacer
    public private(set) var firstSampleTime: WallClockTime?

    /// A frame written now is heard when the pacer releases it.
    public var delayNanoseconds: UInt64 { pacer.nanosecondsUntilNextFrame(offset: 0) }

    /// The next frame plays at its slot on the file's timeline, however late it is written.
    public var nextFramePlayTime: MonotonicInstant? { pacer.dueTime(offset: 0) }

    public init(frameLength: FrameLength) {
        pacer = FramePacer(frameSamples: frameLength.samples, sampleRate: VoiceFormat.sampleRate)
    }

    public func write(_ frame: [Float]) throws(AudioEndpointError) {
        if let start = pacer.waitForNextFrame(offset: 0) { firstSampleTime = start }
    }

    public func close() {}
}
