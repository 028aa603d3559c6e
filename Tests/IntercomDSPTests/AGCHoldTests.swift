import IntercomCore
import IntercomDSP
import Testing
import TestSupport

/// Gain control after the echo canceller must not raise what it hears while the speaker
/// plays: that is where the canceller's residual echo is, and lifting it undoes the canceller.
@Suite struct AGCHoldTests {
    /// The gain, in dB, that the preprocessor applied to a quiet voice over five seconds,
    /// judged over the last two, with `reference` playing on the speaker all along.
    static func gainApplied(reference: [Float]) throws -> Double {
        let frame = 480
        let quiet = try SpeechFixture.speech(SpeechFixture.paragraph, voice: .female).prefix(5 * 48_000).map { $0 * 0.05 }
        let canceller = try EchoCanceller(frameLength: FrameLength(samples: frame), tailMilliseconds: 100)
        var configuration = PreprocessorConfiguration()
        configuration.denoise = false
        let preprocessor = try Preprocessor(frameLength: FrameLength(samples: frame), configuration: configuration, echoCanceller: canceller)
        var output: [Float] = []
        for start in stride(from: 0, to: quiet.count - frame + 1, by: frame) {
            let played = (start..<(start + frame)).map { int16(fromFloat: reference[$0 % reference.count]) }
            var samples = try canceller.cancel(capture: quiet[start..<(start + frame)].map(int16(fromFloat:)), reference: played)
            try preprocessor.process(&samples)
            output += samples.map(float(fromInt16:))
        }
        let judged = (3 * 48_000)..<output.count
        return SignalMeasures.decibels(SignalMeasures.energy(output[judged]), over: SignalMeasures.energy(quiet[judged]))
    }

    @Test func gainRisesOnlyWhileTheSpeakerIsSilent() throws {
        let farSpeech = try SpeechFixture.speech(SpeechFixture.sentence).map { $0 * 0.5 }
        let whileSilent = try Self.gainApplied(reference: [0])
        let whilePlaying = try Self.gainApplied(reference: farSpeech)
        #expect(whileSilent > 6, "AGC raised a quiet voice by only \(whileSilent) dB")
        #expect(whilePlaying < 2, "AGC raised the microphone by \(whilePlaying) dB while the speaker played")
    }
}
