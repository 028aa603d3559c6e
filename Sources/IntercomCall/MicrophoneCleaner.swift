import IntercomCore
import IntercomDSP

/// The cleaning stages of the send path: key click suppressor (with the denoiser) → the speech
/// band taken down to 16 kHz (`SpeechBand`) → echo canceller → voice detector → preprocessor
/// (denoise, AGC, residual echo) → back to 48 kHz with the band above 8 kHz scaled as the
/// speech band was → residual echo suppressor (with the canceller), run on each microphone
/// frame in 5 ms blocks.
///
/// SpeexDSP's canceller and preprocessor at 16 kHz do 41 % of the instructions they did at
/// 48 kHz, and the whole live chain 24 % fewer (Docs/benchmarks.md, "The cleaning at 16 kHz"),
/// for 1 ms of resampling. The click suppressor works at 48 kHz, ahead of the split: a click's
/// energy above 8 kHz is what tells it from speech (at 16 kHz it took 0.1 PESQ-WB less of the
/// keyboard out), and it touches only a click's own milliseconds.
///
/// The voice detector (`VoiceDetector`) listens to the canceller's output, before the
/// denoiser and AGC: their varying gains make a babble's level swing like a talker's (in the
/// acoustic lab the same detector after them opened on babble for 8-24 s a minute, before
/// them for about 1).
///
/// Blocks rather than whole frames because the preprocessor's overlapping analysis windows
/// delay its output by one block: 5 ms, where a 10 or 20 ms frame would cost its whole length.
/// Short blocks are not free: SpeexDSP's canceller does about 1.8 times the instructions a
/// second on 5 ms blocks as on 10 ms ones. 10 ms blocks were tried for the Pi profile (whose
/// 20 ms frames wait anyway): once the denoiser has heard a few seconds of quiet, on 10 ms
/// blocks it cuts into speech more (0.25 PESQ-WB in the lab's calls, Docs/acoustic-lab.md).
final class MicrophoneCleaner {
    /// 5 ms at 48 kHz; frames of 10 and 20 ms hold a whole number of blocks.
    static let preferredBlockSamples = 240
    /// The residual echo suppressor's added delay: 1 ms at 48 kHz.
    static let residualEchoCrossfadeSamples = 48

    private let blockSamples: Int
    /// The speech band at 16 kHz, where the stages up to the preprocessor run.
    private let band: SpeechBand
    /// Present for live input with echo cancellation on.
    private let echoCanceller: EchoCanceller?
    private let preprocessor: Preprocessor
    private var detector: VoiceDetector
    /// Present when denoising: keyboard clicks are noise SpeexDSP's denoiser leaves.
    private var clickSuppressor: KeyClickSuppressor?
    /// Present with the canceller: the echo of a path it has not learned yet (`ResidualEchoSuppressor`).
    private let residualEcho: ResidualEchoSuppressor?
    /// Whether the preprocessor's output is sent. When it would neither denoise, level nor
    /// suppress echo (file input), it only listens, on a copy: its delay would buy nothing.
    private let shapesAudio: Bool
    private var block: [Int16]
    private var referenceBlock: [Int16]
    /// A block of the speech band, and of the far end's.
    private var bandBlock: [Int16]
    private var bandReferenceBlock: [Int16]
    /// The canceller's prediction of the last frame's echo (its input less its output) at
    /// 48 kHz, and the microphone as that prediction is of it: both `SpeechBand`'s
    /// resampling delay behind the frame.
    private(set) var echoPrediction: [Int16]
    private(set) var echoPredictionMicrophone: [Int16]

    /// Cleaning for frames of `frameLength`, as `settings` asks; with `echoModel`, echo
    /// cancellation too.
    init(frameLength: FrameLength, settings: PreprocessorConfiguration, echoModel: EchoCanceller.Model?) throws {
        let frameSamples = frameLength.samples
        let blockSamples = frameSamples % Self.preferredBlockSamples == 0 ? Self.preferredBlockSamples : frameSamples
        self.blockSamples = blockSamples
        let blockLength = FrameLength(samples: blockSamples)
        band = try SpeechBand(blockLength: blockLength)
        echoCanceller = try echoModel.map { model throws(SpeexError) in
            try EchoCanceller(frameLength: blockLength, tailMilliseconds: model.tailMilliseconds,
                              cancelsDistortion: model.cancelsDistortion, sampleRate: SpeechBand.rate)
        }
        shapesAudio = settings.denoise || settings.automaticGainControl || echoCanceller != nil
        preprocessor = try Preprocessor(frameLength: blockLength, sampleRate: SpeechBand.rate, configuration: settings,
                                        echoCanceller: echoCanceller)
        detector = VoiceDetector(threshold: settings.vadStartProbability, sampleRate: SpeechBand.rate)
        clickSuppressor = settings.denoise ? KeyClickSuppressor() : nil
        // The alignment keeps the echo within the first half of the tail (`EchoAlignment.window`),
        // so the suppressor's ring of the far end's spectra need reach no further.
        residualEcho = try echoModel.map { model throws(FFTError) in
            try ResidualEchoSuppressor(hopSamples: blockSamples,
                                       maximumEchoDelaySamples: MediaTime.samples(milliseconds: model.tailMilliseconds, rate: VoiceFormat.sampleRate) / 2,
                                       crossfadeSamples: min(Self.residualEchoCrossfadeSamples, blockSamples / 2))
        }
        block = [Int16](repeating: 0, count: blockSamples)
        referenceBlock = [Int16](repeating: 0, count: blockSamples)
        bandBlock = [Int16](repeating: 0, count: band.bandSamples)
        bandReferenceBlock = [Int16](repeating: 0, count: band.bandSamples)
        echoPrediction = [Int16](repeating: 0, count: frameSamples)
        echoPredictionMicrophone = [Int16](repeating: 0, count: frameSamples)
    }

    /// Whether `clean` wants the speaker's reference for each frame.
    var cancelsEcho: Bool { echoCanceller != nil }

    /// Cleans `frame` in place (or only listens to it, see `shapesAudio`); `reference` is what
    /// the speaker played while it was captured, when cancelling echo, and the echo lies
    /// `echoDelaySamples` behind it (nil: the signals have not found it yet).
    /// Returns whether the voice detector hears a voice going on.
    func clean(_ frame: inout [Int16], reference: [Int16]?, echoDelaySamples: Int?) throws -> Bool {
        var speech = false
        for start in stride(from: 0, to: frame.count, by: blockSamples) {
            let range = start..<(start + blockSamples)
            for (offset, index) in range.enumerated() { block[offset] = frame[index] }
            if clickSuppressor != nil { block.withUnsafeMutableBufferPointer { clickSuppressor?.process($0) } }
            let cancelling = echoCanceller != nil && reference != nil
            if let reference, cancelling {
                for (offset, index) in range.enumerated() { referenceBlock[offset] = reference[index] }
            }
            try block.withUnsafeBufferPointer { (microphone) throws(SpeexError) in
                try referenceBlock.withUnsafeBufferPointer { (played) throws(SpeexError) in
                    try band.split(microphone, reference: cancelling ? played : nil)
                }
            }
            let microphoneBand = band.microphoneBand
            for index in bandBlock.indices { bandBlock[index] = microphoneBand[index] }
            if let echoCanceller, cancelling {
                let referenceBand = band.referenceBand
                for index in bandReferenceBlock.indices { bandReferenceBlock[index] = referenceBand[index] }
                try echoCanceller.cancel(&bandBlock, reference: bandReferenceBlock)
                try bandBlock.withUnsafeBufferPointer { (output) throws(SpeexError) in try band.cancelled(output) }
                let prediction = band.prediction, heard = band.delayedMicrophone
                for (offset, index) in range.enumerated() {
                    echoPrediction[index] = prediction[offset]
                    echoPredictionMicrophone[index] = heard[offset]
                }
            }
            speech = bandBlock.withUnsafeBufferPointer { detector.analyse($0) }
            try preprocessor.process(&bandBlock)
            guard shapesAudio else { continue }
            try bandBlock.withUnsafeBufferPointer { (cleaned) throws(SpeexError) in
                try block.withUnsafeMutableBufferPointer { (output) throws(SpeexError) in try band.join(cleaned, into: output) }
            }
            if let residualEcho, reference != nil {
                block.withUnsafeMutableBufferPointer { block in
                    referenceBlock.withUnsafeBufferPointer { residualEcho.process(block, reference: $0, echoDelaySamples: echoDelaySamples ?? 0) }
                }
            }
            for (offset, index) in range.enumerated() { frame[index] = block[offset] }
        }
        return speech
    }

    /// New preprocessor settings (a changed VOX threshold); what it learned is kept.
    func apply(_ settings: PreprocessorConfiguration) throws {
        try preprocessor.apply(settings)
        detector.threshold = settings.vadStartProbability
    }

    /// The voice detector's last frame, for figures and tests.
    var voiceFrame: VoiceDetector.Frame { detector.last }
}
