import CSpeexDSP
import IntercomCore

/// Owns a Speex acoustic echo canceller (MDF adaptive filter).
///
/// The caller aligns the streams: `reference` must be what the speaker played at or
/// before the moment `capture` was recorded, so the echo in `capture` is predictable from it.
public final class EchoCanceller {
    public let frameSamples: Int
    public let tailSamples: Int
    let state: OpaquePointer
    private var output: [Int16]
    private var farEnd: FarEndActivity

    /// - Parameters:
    ///   - frameLength: the audio of one call (10 or 20 ms are typical).
    ///   - tailMilliseconds: the longest echo path to model: room reverberation plus device delay.
    public init(frameLength: FrameLength, tailMilliseconds: Int, sampleRate: Int = VoiceFormat.sampleRate) throws(SpeexError) {
        let frameSamples = frameLength.samples(atRate: sampleRate)
        guard frameSamples > 0 else { throw .invalidSetting(name: "frame size", value: Double(frameSamples)) }
        guard (10...2000).contains(tailMilliseconds) else {
            throw .invalidSetting(name: "echo tail (ms)", value: Double(tailMilliseconds))
        }
        tailSamples = MediaTime.samples(milliseconds: tailMilliseconds, rate: sampleRate)
        guard let state = speex_echo_state_init(Int32(frameSamples), Int32(tailSamples)) else {
            throw .creationFailed(component: "echo canceller")
        }
        var rate = Int32(sampleRate)
        speex_echo_ctl(state, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        self.state = state
        self.frameSamples = frameSamples
        output = [Int16](repeating: 0, count: frameSamples)
        farEnd = FarEndActivity(sampleRate: sampleRate)
    }

    deinit { speex_echo_state_destroy(state) }

    /// Removes from `capture` the echo of `reference`; both are one frame.
    public func cancel(capture: [Int16], reference: [Int16]) throws(SpeexError) -> [Int16] {
        var cleaned = capture
        try cancel(&cleaned, reference: reference)
        return cleaned
    }

    /// Removes from `frame`, in place, the echo of `reference`; both are one frame. Allocates
    /// nothing, for the capture thread.
    public func cancel(_ frame: inout [Int16], reference: [Int16]) throws(SpeexError) {
        guard frame.count == frameSamples else { throw .invalidFrameSize(got: frame.count, expected: frameSamples) }
        guard reference.count == frameSamples else { throw .invalidFrameSize(got: reference.count, expected: frameSamples) }
        // SpeexDSP does not promise that capture and output may share memory: write to our own.
        output.withUnsafeMutableBufferPointer { out in
            speex_echo_cancellation(state, frame, reference, out.baseAddress)
        }
        for index in frame.indices { frame[index] = output[index] }
        _ = farEnd.update(reference: reference)
    }

    /// Whether the speaker played something in the last few hundred milliseconds, so that
    /// the microphone may still hold its echo.
    public var isFarEndActive: Bool { farEnd.isActive }
}
