import IntercomCore
import IntercomDSP
import Testing
import TestSupport

/// The speech-similarity measure the sound-card call tests rely on must tell a phase shift,
/// which is inaudible, from damage and from different speech.
@Suite struct EnvelopeCorrelationTests {
    @Test func phaseShiftsKeepItHighDamageAndOtherSpeechLowerIt() throws {
        let speech = try SpeechFixture.speech(SpeechFixture.sentence)
        let other = try SpeechFixture.speech(SpeechFixture.paragraph, voice: .female)
        // Speex's DC removal, as the echo canceller applies it: a high-pass that turns phases.
        let canceller = try EchoCanceller(frameLength: .milliseconds(10), tailMilliseconds: 100)
        var filtered: [Float] = []
        for start in stride(from: 0, to: speech.count - 480, by: 480) {
            let frame = speech[start..<(start + 480)].map(int16(fromFloat:))
            filtered += try canceller.cancel(capture: frame, reference: [Int16](repeating: 0, count: 480)).map(float(fromInt16:))
        }
        // Every other 100 ms gone, as a badly broken link would leave it.
        let chopped = speech.enumerated().map { $0.offset / 4_800 % 2 == 0 ? $0.element : 0 }

        let shifted = SignalMeasures.envelopeCorrelation(speech[..<filtered.count], filtered[...])
        let damaged = SignalMeasures.envelopeCorrelation(speech[...], chopped[...])
        let different = SignalMeasures.envelopeCorrelation(speech[...], other.prefix(speech.count))
        #expect(shifted > 0.97, "\(shifted)")
        #expect(damaged < 0.8, "\(damaged)")
        #expect(different < 0.5, "\(different)")
    }

    /// One dropout of a fifth of a second in the middle of a sentence (an underrun's digital
    /// silence) is told apart from the sound: the envelopes still match where it is heard, and
    /// the dropout is its share of the speech; every other 100 ms gone drops out of half of it.
    @Test func aDropoutIsToldApartFromTheSound() throws {
        let speech = try SpeechFixture.speech(SpeechFixture.sentence)
        let middle = speech.count / 2
        let dropped = speech.enumerated().map { (middle..<(middle + 9_600)).contains($0.offset) ? 0 : $0.element }
        let chopped = speech.enumerated().map { $0.offset / 4_800 % 2 == 0 ? $0.element : 0 }

        let withDropout = SignalMeasures.envelopeCorrelationAndDropouts(speech[...], dropped[...])
        let choppedUp = SignalMeasures.envelopeCorrelationAndDropouts(speech[...], chopped[...])
        #expect(withDropout.correlation > 0.97, "\(withDropout)")
        #expect(withDropout.dropouts > 0.02 && withDropout.dropouts < 0.12, "\(withDropout)")
        #expect(choppedUp.dropouts > 0.4, "\(choppedUp)")
        // Taken whole, the one dropout outweighs the rest, as CI's run showed.
        #expect(SignalMeasures.envelopeCorrelation(speech[...], dropped[...]) < withDropout.correlation)
    }
}
