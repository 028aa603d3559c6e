import IntercomCore

/// A microphone that hears nothing, at the real-time rate: for peers that only listen.
public final class SilentSource: AudioSource {
    private var pacer: FramePacer
    public private(set) var firstSampleTime: WallClockTime?

    /// Frames are handed over the moment they are complete: nothing waits behind them.
    public var delayNanoseconds: UInt64 { 0 }

    /// The frame just read began one frame period before it was handed over.
    public var lastFrameCaptureTime: MonotonicInstant? { pacer.dueTime(offset: -1) }

    public init(frameLength: FrameLength) {
        pacer = FramePacer(frameSamples: frameLength.samples, sampleRate: VoiceFormat.sampleRate)
    }

    public func read(into frame: inout [Int16]) throws(AudioEndpointError) -> Bool {
        if let start = pacer.waitForNextFrame(offset: 1) { firstSampleTime = start }
        for i in frame.indices { frame[i] = 0 }
        return false
    }
}
