import IntercomCore
import IntercomDSP
import Testing
import TestSupport

@Suite struct VoiceActivityTests {
    /// The preprocessor's voice decision (start and continue thresholds on SpeexDSP's speech
    /// probability): speech is voice, the quiet before it is not.
    @Test func speechIsVoiceAndQuietIsNot() throws {
        let frame = 480
        var noise = SeededNoise(seed: 7)
        let quiet = noise.samples(48_000, amplitude: 0.002)
        let speech = try SpeechFixture.speech()
        let preprocessor = try Preprocessor(frameLength: FrameLength(samples: frame))
        var decisions: [Bool] = []
        let signal = quiet + speech
        for start in stride(from: 0, to: signal.count - frame, by: frame) {
            var samples = signal[start..<(start + frame)].map { Int16(max(-1, min(1, $0)) * 32_767) }
            decisions.append(try preprocessor.process(&samples))
        }
        let quietFrames = decisions[50..<100]
        let speechLevels = SignalMeasures.blockRMS(speech, block: frame)
        let loudFrames = speechLevels.indices.filter { speechLevels[$0] > 0.05 }.map { $0 + 100 }.filter { $0 < decisions.count }
        #expect(quietFrames.filter { $0 }.count <= 5, "quiet taken for voice: \(quietFrames.filter { $0 }.count) of 50")
        #expect(Double(loudFrames.filter { decisions[$0] }.count) / Double(loudFrames.count) > 0.8)
    }
}
