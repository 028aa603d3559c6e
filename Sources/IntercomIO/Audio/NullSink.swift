import IntercomDSP

/// Plays into nothing, at the real-time rate: for peers that only talk.
public final class NullSink: AudioSink {
    private var pacer: FramePacer
    public private(set) var firstSampleTime: UInt64?

    public init(frameSamples: Int) {
        pacer = FramePacer(frameSamples: frameSamples, sampleRate: VoiceFormat.sampleRate)
    }

    public func write(_ frame: [Float]) throws(AudioEndpointError) {
        if let start = pacer.waitForNextFrame(offset: 0) { firstSampleTime = start }
    }

    public func close() {}
}
