import Foundation
import IntercomDSP
import Testing
import TestSupport

@Suite struct ResamplerTests {
    static func tone(frequency: Double, rate: Int, seconds: Double, amplitude: Float = 0.5) -> [Float] {
        (0..<Int(Double(rate) * seconds)).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
    }

    /// Frequency from the count of upward zero crossings over the steady middle of the signal.
    static func measuredFrequency(_ x: [Float], rate: Int) -> Double {
        let middle = Array(x[(x.count / 10)..<(x.count * 9 / 10)])
        var crossings: [Int] = []
        for i in 1..<middle.count where middle[i - 1] < 0 && middle[i] >= 0 { crossings.append(i) }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / Double(last - first)
    }

    @Test(arguments: [(44_100, 48_000), (48_000, 44_100), (16_000, 48_000)])
    func keepsAToneFrequencyAndLevel(rates: (Int, Int)) throws {
        let (inputRate, outputRate) = rates
        let input = Self.tone(frequency: 1000, rate: inputRate, seconds: 1)
        let resampler = try Resampler(inputRate: inputRate, outputRate: outputRate)
        let output = try resampler.process(input)

        let expectedLength = Double(input.count) * Double(outputRate) / Double(inputRate)
        // The filter's own delay is skipped at the start and held back at the end.
        let heldBack = Double(resampler.inputLatency * outputRate / inputRate)
        #expect(abs(Double(output.count) - expectedLength) <= heldBack + 4)
        #expect(abs(Self.measuredFrequency(output, rate: outputRate) - 1000) < 1)
        let middle = output[(output.count / 10)..<(output.count * 9 / 10)]
        let levelChange = 20 * log10(SignalMeasures.rms(middle) / SignalMeasures.rms(input))
        #expect(abs(levelChange) < 0.2, "level changed by \(levelChange) dB")
    }

    @Test(arguments: [1000, -1000])
    func fineAdjustmentChangesOutputLengthByThatMuch(ppm: Int) throws {
        let input = Self.tone(frequency: 440, rate: 48_000, seconds: 10)
        let resampler = try Resampler(inputRate: 48_000, outputRate: 48_000)
        try resampler.adjust(ppm: ppm)
        #expect(resampler.adjustmentPPM == ppm)
        let output = try resampler.process(input)
        // Consuming input 0.1 % faster yields 0.1 % fewer output samples.
        let expected = Double(input.count) / (1 + Double(ppm) / 1_000_000)
        let latency = Double(resampler.inputLatency)
        #expect(abs(Double(output.count) - expected) <= latency + 2, "got \(output.count), expected \(expected)")
        #expect(abs(Double(output.count - input.count)) > 400)
    }

    /// Storage reserved for adjustments leaves the filter as a fresh one: the same output,
    /// sample for sample, at the nominal ratio and after speeding up and slowing down.
    @Test func reservingForAdjustmentLeavesTheOutputAsItWas() throws {
        var noise = SeededNoise(seed: 9)
        let input = noise.samples(4_800, amplitude: 0.5)
        let fresh = try Resampler(inputRate: 48_000, outputRate: 48_000, quality: 4)
        let reserved = try Resampler(inputRate: 48_000, outputRate: 48_000, quality: 4)
        try reserved.reserveForAdjustment()
        #expect(reserved.adjustmentPPM == 0)
        for ppm in [0, 5_000, -5_000, 0] {
            try fresh.adjust(ppm: ppm)
            try reserved.adjust(ppm: ppm)
            #expect(try fresh.process(input) == reserved.process(input), "at \(ppm) ppm")
        }
    }

    /// libspeexdsp 1.2.1 crashed on 999999/1000000 followed by 6233/6250; the ratio steps
    /// intercom uses must survive any sequence of changes.
    @Test func survivesRandomRatioChangesWhileStreaming() throws {
        let resampler = try Resampler(inputRate: 48_000, outputRate: 48_000, quality: 4)
        var noise = SeededNoise(seed: 5)
        let input = noise.samples(2_000, amplitude: 0.5)
        var output = [Float](repeating: 0, count: 480)
        for _ in 0..<50_000 {
            try resampler.adjust(ppm: Int(noise.next() % 10_001) - 5_000)
            let count = Int(noise.next() % 1_000)
            _ = try input.withUnsafeBufferPointer { (inBuffer) throws(SpeexError) in
                try output.withUnsafeMutableBufferPointer { (outBuffer) throws(SpeexError) in
                    try resampler.process(UnsafeBufferPointer(rebasing: inBuffer[0..<count]), into: outBuffer)
                }
            }
        }
        #expect(abs(resampler.adjustmentPPM) <= 5_000)
        #expect(resampler.adjustmentPPM % Resampler.adjustmentStepPPM == 0)
    }
}
