import IntercomCore
import IntercomDSP

/// The cleaning stages of the send path: echo canceller → key click suppressor (with the
/// denoiser) → voice detector → preprocessor (denoise, AGC, residual echo) → residual echo
/// suppressor (with the canceller), run on each microphone frame in 5 ms blocks.
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
    /// The canceller's prediction of the last frame's echo: its input less its output.
    private(set) var echoPrediction: [Int16]

    /// Cleaning for frames of `frameLength`, as `settings` asks; with `echoModel`, echo
    /// cancellation too.
    init(frameLength: FrameLength, settings: PreprocessorConfiguration, echoModel: EchoCanceller.Model?) throws {
        let frameSamples = frameLength.samples
        let blockSamples = frameSamples % Self.preferredBlockSamples == 0 ? Self.preferredBlockSamples : frameSamples
        self.blockSamples = blockSamples
        let blockLength = FrameLength(samples: blockSamples)
        echoCanceller = try echoModel.map { model throws(SpeexError) in
            try EchoCanceller(frameLength: blockLength, tailMilliseconds: model.tailMilliseconds,
                              cancelsDistortion: model.cancelsDistortion)
        }
        shapesAudio = settings.denoise || settings.automaticGainControl || echoCanceller != nil
        preprocessor = try Preprocessor(frameLength: blockLength, configuration: settings, echoCanceller: echoCanceller)
        detector = VoiceDetector(threshold: settings.vadStartProbability)
        clickSuppressor = settings.denoise ? KeyClickSuppressor() : nil
        // The alignment keeps the echo within the first half of the tail (`EchoAlignment.window`),
        // so the suppressor's ring of the far end's spectra need reach no further.
        residualEcho = try echoCanceller.map { canceller throws(FFTError) in
            try ResidualEchoSuppressor(hopSamples: blockSamples, maximumEchoDelaySamples: canceller.tailSamples / 2,
                                       crossfadeSamples: min(Self.residualEchoCrossfadeSamples, blockSamples / 2))
        }
        block = [Int16](repeating: 0, count: blockSamples)
        referenceBlock = [Int16](repeating: 0, count: blockSamples)
        echoPrediction = [Int16](repeating: 0, count: frameSamples)
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
            if let echoCanceller, let reference {
                for (offset, index) in range.enumerated() { referenceBlock[offset] = reference[index] }
                try echoCanceller.cancel(&block, reference: referenceBlock)
                for (offset, index) in range.enumerated() {
                    echoPrediction[index] = Int16(clamping: Int(frame[index]) - Int(block[offset]))
                }
            }
            if clickSuppressor != nil { block.withUnsafeMutableBufferPointer { clickSuppressor?.process($0) } }
            speech = block.withUnsafeBufferPointer { detector.analyse($0) }
            try preprocessor.process(&block)
            if let residualEcho, reference != nil {
                block.withUnsafeMutableBufferPointer { block in
                    referenceBlock.withUnsafeBufferPointer { residualEcho.process(block, reference: $0, echoDelaySamples: echoDelaySamples ?? 0) }
                }
            }
            if shapesAudio {
                for (offset, index) in range.enumerated() { frame[index] = block[offset] }
            }
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
