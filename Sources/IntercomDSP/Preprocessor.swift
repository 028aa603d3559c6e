import CSpeexDSP
import IntercomCore

/// Settings of the Speex preprocessor that runs on the microphone after echo cancellation.
public struct PreprocessorConfiguration: Equatable, Sendable {
    public var denoise = true
    /// Maximum attenuation of noise, in dB (negative).
    public var noiseSuppressionDB = -30
    public var automaticGainControl = true
    /// The speech level AGC aims for, in 16-bit sample units (RMS).
    public var agcTargetLevel = 8000
    /// The most AGC may amplify, in dB.
    public var agcMaxGainDB = 20
    public var voiceActivityDetection = true
    /// Speech probability (percent) to start and to stay in the "voice" state.
    public var vadStartProbability = 80
    public var vadContinueProbability = 65
    /// Attenuation of residual echo (dB, negative), idle and while the far end talks.
    public var echoSuppressionDB = -40
    public var echoSuppressionActiveDB = -15

    public init() {}
}

/// Owns a Speex preprocessor: denoise, automatic gain control, voice activity detection,
/// and residual-echo suppression when linked to an `EchoCanceller`.
public final class Preprocessor {
    public let frameSamples: Int
    /// What the AGC's target is multiplied by at this rate (see `apply`).
    private let levelScale: Float
    private let state: OpaquePointer
    /// Kept alive while the preprocessor holds a pointer to its state.
    private let echoCanceller: EchoCanceller?
    private var voiceActivityDetection = false
    private var voiceStart = 0
    private var voiceContinue = 0
    private var wasVoice = false
    /// How fast AGC may raise the gain (dB/s) when it is not held.
    private let agcIncrementDBPerSecond: Int32
    /// Whether AGC's gain is held now (it may still fall): while the far end plays, a rising
    /// gain would lift the echo canceller's residual back to audible.
    private var agcGainHeld = false

    public init(
        frameLength: FrameLength,
        sampleRate: Int = VoiceFormat.sampleRate,
        configuration: PreprocessorConfiguration = .init(),
        echoCanceller: EchoCanceller? = nil
    ) throws(SpeexError) {
        let frameSamples = frameLength.samples(atRate: sampleRate)
        guard frameSamples > 0 else { throw .invalidSetting(name: "frame size", value: Double(frameSamples)) }
        if let echoCanceller, echoCanceller.frameSamples != frameSamples {
            throw .invalidFrameSize(got: echoCanceller.frameSamples, expected: frameSamples)
        }
        guard let state = speex_preprocess_state_init(Int32(frameSamples), Int32(sampleRate)) else {
            throw .creationFailed(component: "preprocessor")
        }
        self.state = state
        self.frameSamples = frameSamples
        levelScale = (Float(sampleRate) / Float(VoiceFormat.sampleRate)).squareRoot()
        self.echoCanceller = echoCanceller
        var increment: Int32 = 0
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_GET_AGC_INCREMENT, &increment)
        agcIncrementDBPerSecond = increment
        do {
            try apply(configuration)
        } catch {
            speex_preprocess_state_destroy(state)
            throw error
        }
        if let echoCanceller {
            speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echoCanceller.state))
        }
    }

    deinit { speex_preprocess_state_destroy(state) }

    /// Applies new settings; the learned noise and gain estimates are kept.
    public func apply(_ configuration: PreprocessorConfiguration) throws(SpeexError) {
        let c = configuration
        guard (-100...0).contains(c.noiseSuppressionDB) else { throw .invalidSetting(name: "noise suppression (dB)", value: Double(c.noiseSuppressionDB)) }
        guard (1...32767).contains(c.agcTargetLevel) else { throw .invalidSetting(name: "AGC target level", value: Double(c.agcTargetLevel)) }
        guard (0...60).contains(c.agcMaxGainDB) else { throw .invalidSetting(name: "AGC maximum gain (dB)", value: Double(c.agcMaxGainDB)) }
        guard (0...100).contains(c.vadStartProbability), (0...100).contains(c.vadContinueProbability) else {
            throw .invalidSetting(name: "VAD probability (%)", value: Double(c.vadStartProbability))
        }
        setInt(SPEEX_PREPROCESS_SET_DENOISE, c.denoise ? 1 : 0)
        setInt(SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, c.noiseSuppressionDB)
        setInt(SPEEX_PREPROCESS_SET_AGC, c.automaticGainControl ? 1 : 0)
        // SpeexDSP's loudness sums its bins' power times their count, so the same speech reads
        // √3 louder at 48 kHz than at 16 kHz (bins 100 Hz wide either way, three times as
        // many): the target, given for 48 kHz, is scaled to the rate, and speech leaves at the
        // level it names whatever the rate (at 16 kHz unscaled it left 5 dB louder).
        var level = Float(c.agcTargetLevel) * levelScale
        setInt(SPEEX_PREPROCESS_SET_AGC_TARGET, Int(level.rounded()))
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC_LEVEL, &level)
        setInt(SPEEX_PREPROCESS_SET_AGC_MAX_GAIN, c.agcMaxGainDB)
        // SpeexDSP's own VAD is not switched on: it only compares the speech probability below
        // with these two thresholds (done in `process`), and enabling it prints a warning on
        // stderr ("The VAD has been replaced by a hack…") that is not ours to print.
        voiceActivityDetection = c.voiceActivityDetection
        voiceStart = c.vadStartProbability
        voiceContinue = c.vadContinueProbability
        setInt(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS, c.echoSuppressionDB)
        setInt(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE, c.echoSuppressionActiveDB)
    }

    /// Cleans one frame in place; returns whether it holds voice (always true with VAD off).
    @discardableResult
    public func process(_ frame: inout [Int16]) throws(SpeexError) -> Bool {
        guard frame.count == frameSamples else { throw .invalidFrameSize(got: frame.count, expected: frameSamples) }
        if let echoCanceller, echoCanceller.isFarEndActive != agcGainHeld {
            agcGainHeld.toggle()
            setInt(SPEEX_PREPROCESS_SET_AGC_INCREMENT, agcGainHeld ? 0 : Int(agcIncrementDBPerSecond))
        }
        _ = frame.withUnsafeMutableBufferPointer { speex_preprocess_run(state, $0.baseAddress) }
        guard voiceActivityDetection else { return true }
        let probability = speechProbability
        wasVoice = probability > voiceStart || (wasVoice && probability > voiceContinue)
        return wasVoice
    }

    /// The probability (0...100) that the last frame was speech.
    public var speechProbability: Int {
        var value: Int32 = 0
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_GET_PROB, &value)
        return Int(value)
    }

    private func setInt(_ request: Int32, _ value: Int) {
        var value = Int32(value)
        speex_preprocess_ctl(state, request, &value)
    }
}
