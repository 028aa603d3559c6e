import CSpeexDSP
import IntercomCore

/// Owns a Speex acoustic echo canceller (MDF adaptive filter).
///
/// The caller aligns the streams: `reference` must be what the speaker played at or
/// before the moment `capture` was recorded, so the echo in `capture` is predictable from it.
///
/// With `cancelsDistortion`, the echo of a loudspeaker that distorts is cancelled too: a small
/// speaker played loud flattens its peaks, and that part of its echo is no filter of what it
/// was given, so a linear canceller leaves it (in the acoustic lab's office it held the whole
/// chain to 23.8 dB converged and the near end during double talk to PESQ-WB 2.46, against
/// 40.7 dB and 3.27 through a speaker that does not distort). SpeexDSP's canceller takes
/// several loudspeakers; the second is given a cubic term of what the first plays, so that the
/// two filters together model the speaker as a memoryless odd nonlinearity followed by the room
/// (a Hammerstein model to the third order). In the lab it took the office to 29.8 dB and 3.54,
/// and it helped other shapes of saturation than the lab's (hard clipping, a lower knee). At
/// 48 kHz, where those figures are from, it cost a third more instructions in the microphone's
/// chain; at 16 kHz (`SpeechBand`) less than the linear canceller did at 48, and it is on by
/// default (`Model.standard`). Through a speaker that does not distort the second filter's own
/// error leaves more echo converged (31.0 dB against 40.7; Docs/acoustic-lab.md, "A speaker
/// that distorts").
public final class EchoCanceller {
    /// What a call's canceller models: how long an echo path, and whether the speaker distorts.
    public struct Model: Sendable, Equatable {
        public var tailMilliseconds: Int
        public var cancelsDistortion: Bool
        public init(tailMilliseconds: Int, cancelsDistortion: Bool) {
            self.tailMilliseconds = tailMilliseconds
            self.cancelsDistortion = cancelsDistortion
        }

        /// What a call models unless told otherwise: 300 ms and the speaker's distortion. At
        /// 16 kHz (`SpeechBand`) that costs the live chain 5 % more instructions than 150 ms
        /// without it did at 48 kHz, and in the acoustic lab it is what brings a kitchen's ring
        /// (RT60 0.66 s, which outlasts 150 ms) to 36 dB live where 150 ms left 29, and the near
        /// end through double talk to PESQ-WB 3.19 in the office and 2.99 in the kitchen where
        /// the linear canceller kept 2.36 (Docs/benchmarks.md, "The cleaning at 16 kHz").
        /// Through a speaker that does not distort, in a dry room, it cancels less once
        /// converged (offline the office 31.7 dB against 39.4; live, the suite's clean 50 ms
        /// delay line 28.5-31.1 dB against 37-40): `--no-echo-distortion --echo-tail-ms 150`
        /// is the model for that case (Docs/audio-chain.md).
        public static let standard = Model(tailMilliseconds: 300, cancelsDistortion: true)
    }

    public let frameSamples: Int
    public let tailSamples: Int
    public let cancelsDistortion: Bool
    let state: OpaquePointer
    private var output: [Int16]
    private var farEnd: FarEndActivity
    /// Blocks in a row whose far end was silent (`SilentFarEnd`: nobody talking to us, a
    /// call's usual state). Once the filter's whole history is such silence, SpeexDSP predicts
    /// next to no echo and has nothing to learn from another silent block, so the microphone
    /// passes through untouched and the filter keeps what it learned for the far end's next
    /// word: in a call where nobody speaks the live chain does 44 % fewer instructions once the
    /// canceller rests (Docs/benchmarks.md, "A canceller that rests").
    private var silentBlocks = 0
    /// Silent blocks after which the canceller rests: its history (the tail's blocks and the
    /// one its spectra overlap into) holds nothing else, and a conversation's pause is over.
    private let silentBlocksBeforeRest: Int
    /// How long the far end must have been silent before the canceller rests: longer than
    /// the pauses of a conversation. SpeexDSP's filter keeps learning nothing through a
    /// silence, but its step sizes follow the far end's power, which a silence lowers; resting
    /// from 310 ms of silence on (the tail and a block) left the acoustic lab's kitchen 0.85 dB
    /// less echo cancelled converged offline, resting from 2 s on the same as never resting.
    public static let pauseMilliseconds = 2_000
    /// Blocks passed through without SpeexDSP since the start.
    public private(set) var idleBlocks = 0
    /// With `cancelsDistortion`: each sample played, then the distortion term made from it
    /// (SpeexDSP's interleaved loudspeakers), and the running moments that shape it.
    private var playedAndCubed: [Int16]
    private var secondMoment: Float = 0
    private var fourthMoment: Float = 0
    private var sixthMoment: Float = 0
    /// A block's share of the running powers: about half a second's memory at 5 ms blocks.
    private static let powerSmoothing: Float = 0.01
    /// The distortion term's level against what is played: −6 dB. SpeexDSP normalises its
    /// filters' steps by all loudspeakers' power together, so the term at the same level
    /// halved the first filter's; at −6 dB the canceller alone did better through both a
    /// speaker that distorts and one that does not (office laptop, numpy: converged 24.6 against
    /// 22.9 dB and 27.0 against 24.3; −3 and −9 dB were between, −12 lost in double talk).
    private static let distortionLevel: Float = 0.5

    /// - Parameters:
    ///   - frameLength: the audio of one call (10 or 20 ms are typical).
    ///   - tailMilliseconds: the longest echo path to model: room reverberation plus device delay.
    ///   - cancelsDistortion: model the loudspeaker's distortion too (see above).
    public init(frameLength: FrameLength, tailMilliseconds: Int, cancelsDistortion: Bool = false,
                sampleRate: Int = VoiceFormat.sampleRate) throws(SpeexError) {
        let frameSamples = frameLength.samples(atRate: sampleRate)
        guard frameSamples > 0 else { throw .invalidSetting(name: "frame size", value: Double(frameSamples)) }
        guard (10...2000).contains(tailMilliseconds) else {
            throw .invalidSetting(name: "echo tail (ms)", value: Double(tailMilliseconds))
        }
        tailSamples = MediaTime.samples(milliseconds: tailMilliseconds, rate: sampleRate)
        let loudspeakers: Int32 = cancelsDistortion ? 2 : 1
        guard let state = speex_echo_state_init_mc(Int32(frameSamples), Int32(tailSamples), 1, loudspeakers) else {
            throw .creationFailed(component: "echo canceller")
        }
        var rate = Int32(sampleRate)
        speex_echo_ctl(state, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        self.state = state
        self.frameSamples = frameSamples
        output = [Int16](repeating: 0, count: frameSamples)
        farEnd = FarEndActivity(sampleRate: sampleRate)
        silentBlocksBeforeRest = max((tailSamples + frameSamples - 1) / frameSamples + 1,
                                   MediaTime.samples(milliseconds: Self.pauseMilliseconds, rate: sampleRate) / frameSamples)
        self.cancelsDistortion = cancelsDistortion
        playedAndCubed = [Int16](repeating: 0, count: cancelsDistortion ? 2 * frameSamples : 0)
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
        silentBlocks = SilentFarEnd.holds(reference) ? silentBlocks + 1 : 0
        if silentBlocks > silentBlocksBeforeRest {
            idleBlocks += 1
            _ = farEnd.update(reference: reference)
            return
        }
        // SpeexDSP does not promise that capture and output may share memory: write to our own.
        if cancelsDistortion { interleaveCube(of: reference) }
        let loudspeakers = cancelsDistortion ? playedAndCubed : reference
        output.withUnsafeMutableBufferPointer { out in
            speex_echo_cancellation(state, frame, loudspeakers, out.baseAddress)
        }
        for index in frame.indices { frame[index] = output[index] }
        _ = farEnd.update(reference: reference)
    }

    /// Fills `playedAndCubed` with `reference` and its distortion term: its cube less the
    /// part of the cube that is the sample itself scaled (x³ − (E[x⁴] / E[x²])·x, orthogonal
    /// to x), so that the second filter learns only what the first cannot; with the plain cube,
    /// which is largely the signal again, the two filters shared the same echo and learned it
    /// worse (in the lab's office, 22.9 dB against 24.3 through a clean speaker). SpeexDSP takes
    /// 16-bit loudspeakers, and that term of speech at −20 dBFS is some 40 dB quieter still: it
    /// would round to nothing. So it is scaled to `distortionLevel` below what is played, by
    /// the running moments (about half a second: slow beside the filter, which learns the rest).
    private func interleaveCube(of reference: [Int16]) {
        var second: Float = 0, fourth: Float = 0, sixth: Float = 0
        for sample in reference {
            let x = Float(sample) * (1.0 / 32768)
            let square = x * x
            second += square
            fourth += square * square
            sixth += square * square * square
        }
        let count = Float(frameSamples), keep = 1 - Self.powerSmoothing
        secondMoment = keep * secondMoment + Self.powerSmoothing * second / count
        fourthMoment = keep * fourthMoment + Self.powerSmoothing * fourth / count
        sixthMoment = keep * sixthMoment + Self.powerSmoothing * sixth / count
        let projection = secondMoment > 1e-12 ? fourthMoment / secondMoment : 0
        // The term's power: E[(x³ − p·x)²] = E[x⁶] − E[x⁴]² / E[x²].
        let termPower = sixthMoment - projection * fourthMoment
        let scale = termPower > 1e-24 ? Self.distortionLevel * (secondMoment / termPower).squareRoot() * 32768 : 0
        for index in 0..<frameSamples {
            let x = Float(reference[index]) * (1.0 / 32768)
            playedAndCubed[2 * index] = reference[index]
            let term = (x * x * x - projection * x) * scale
            playedAndCubed[2 * index + 1] = Int16(max(-32768, min(32767, term.rounded())))
        }
    }

    /// Whether the speaker played something in the last few hundred milliseconds, so that
    /// the microphone may still hold its echo.
    public var isFarEndActive: Bool { farEnd.isActive }
}
