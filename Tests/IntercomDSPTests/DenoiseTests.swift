import IntercomCore
import IntercomDSP
import Testing
import TestSupport

@Suite struct DenoiseTests {
    @Test func stationaryNoiseIsSuppressedWhileSpeechKeepsItsLevel() throws {
        let frame = 480
        let speech = try SpeechFixture.speech()
        // One second of noise alone first, so the estimator learns it; then speech.
        let lead = 48_000
        let clean = [Float](repeating: 0, count: lead) + speech
        let speechBlocks = SignalMeasures.blockRMS(speech, block: frame)
        let loudest = speechBlocks.sorted().suffix(speechBlocks.count / 3)
        let speechRMS = (loudest.reduce(0) { $0 + $1 * $1 } / Double(loudest.count)).squareRoot()
        // 10 dB SNR against the speech's active level.
        let noiseAmplitude = Float(speechRMS / 3.162 * 3.0.squareRoot())  // uniform noise: rms = a/sqrt(3)
        var noise = SeededNoise(seed: 42)
        let noisy = clean.map { $0 + noise.sample() * noiseAmplitude }

        var configuration = PreprocessorConfiguration()
        configuration.automaticGainControl = false
        configuration.voiceActivityDetection = false
        let preprocessor = try Preprocessor(frameLength: FrameLength(samples: frame), configuration: configuration)
        var output: [Float] = []
        for start in stride(from: 0, to: noisy.count - frame + 1, by: frame) {
            var samples = noisy[start..<(start + frame)].map { int16(fromFloat: $0) }
            try preprocessor.process(&samples)
            output += samples.map { float(fromInt16: $0) }
        }

        let blocks = clean.count / frame
        let cleanRMS = SignalMeasures.blockRMS(clean, block: frame)
        let noisyRMS = SignalMeasures.blockRMS(noisy, block: frame)
        let outRMS = SignalMeasures.blockRMS(output, block: frame)
        let settled = 50  // half a second for the noise estimate to settle
        let noiseOnly = (settled..<blocks).filter { cleanRMS[$0] < speechRMS * 0.01 }
        let speechActive = (settled..<blocks).filter { cleanRMS[$0] > speechRMS }
        #expect(noiseOnly.count > 50 && speechActive.count > 50)

        func level(_ rms: [Double], _ indices: [Int]) -> Double { indices.reduce(0) { $0 + rms[$1] * rms[$1] } }
        let noiseReduction = SignalMeasures.decibels(level(noisyRMS, noiseOnly), over: level(outRMS, noiseOnly))
        let speechChange = SignalMeasures.decibels(level(outRMS, speechActive), over: level(cleanRMS, speechActive))
        #expect(noiseReduction >= 10, "noise reduced by \(noiseReduction) dB")
        #expect(abs(speechChange) <= 3, "speech level changed by \(speechChange) dB")
    }
}
