import Foundation
import IntercomCore
import IntercomDSP
import Testing

/// The speech band taken down to 16 kHz and back: whole when the cleaning leaves it alone,
/// the band above it following the cleaning's gain.
@Suite struct SpeechBandTests {
    /// Runs `signal` through the band in 5 ms blocks with a cleaning that gives each block out
    /// one block later (as SpeexDSP's preprocessor does) times `gain(block)`.
    private static func run(_ signal: [Int16], gain: (Int) -> Float) throws -> (output: [Int16], delay: Int) {
        let band = try SpeechBand(blockLength: FrameLength(samples: 240))
        var held = [Int16](repeating: 0, count: band.bandSamples)
        var output = [Int16]()
        var block = [Int16](repeating: 0, count: 240)
        for (number, start) in stride(from: 0, to: signal.count - 239, by: 240).enumerated() {
            let microphone = Array(signal[start..<(start + 240)])
            try microphone.withUnsafeBufferPointer { try band.split($0, reference: nil) }
            let cleaned = held
            let g = gain(number)
            held = band.microphoneBand.map { Int16(clamping: Int((Float($0) * g).rounded())) }
            try cleaned.withUnsafeBufferPointer { cleaned in
                try block.withUnsafeMutableBufferPointer { try band.join(cleaned, into: $0) }
            }
            output += block
        }
        return (output, band.delaySamples)
    }

    private static func noise(_ count: Int, seed: UInt64) -> [Int16] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in Int16.random(in: -8_000...8_000, using: &generator) }
    }

    @Test func leftAloneTheMicrophoneComesOutWholeItsDelayLater() throws {
        // White noise: every frequency up to 24 kHz, across the bands' crossover.
        let signal = Self.noise(48_000, seed: 7)
        let (output, delay) = try Self.run(signal) { _ in 1 }
        #expect(delay == 240 + 48, "a block and 1 ms of resampling")
        var error = 0.0, power = 0.0
        for index in delay..<output.count {
            let difference = Double(output[index]) - Double(signal[index - delay])
            error += difference * difference
            power += Double(signal[index - delay]) * Double(signal[index - delay])
        }
        // Only the speech band's rounding to 16 bits at 16 kHz differs: over 60 dB down.
        #expect(10 * log10(error / power) < -60, "reconstruction error \(10 * log10(error / power)) dB")
    }

    @Test(arguments: [0.25 as Float, 0.01])
    func theBandAboveFollowsTheCleaningsGain(gain: Float) throws {
        // A 1 kHz tone and a 12 kHz one, the cleaning turning the band down from block 50 on.
        let signal = (0..<48_000).map { n -> Int16 in
            Int16(6_000 * sin(2 * Double.pi * 1_000 * Double(n) / 48_000) + 3_000 * sin(2 * Double.pi * 12_000 * Double(n) / 48_000))
        }
        let (output, delay) = try Self.run(signal) { $0 >= 50 ? gain : 1 }
        // Well after the change: each tone at `gain` of what went in.
        let settled = (60 * 240 + delay)..<(190 * 240)
        func level(_ samples: [Double], hertz: Double) -> Double {
            // The tone's amplitude by correlation with it.
            var cosine = 0.0, sine = 0.0
            for (offset, sample) in samples.enumerated() {
                let phase = 2 * Double.pi * hertz * Double(offset) / 48_000
                cosine += sample * cos(phase)
                sine += sample * sin(phase)
            }
            return 2 * (cosine * cosine + sine * sine).squareRoot() / Double(samples.count)
        }
        let out = settled.map { Double(output[$0]) }
        let low = level(out, hertz: 1_000), high = level(out, hertz: 12_000)
        #expect(abs(low / 6_000 - Double(gain)) < 0.02 * Double(gain) + 0.001, "speech band at \(low / 6_000)")
        #expect(abs(high / 3_000 - Double(gain)) < 0.05 * Double(gain) + 0.001, "band above at \(high / 3_000)")
    }
}
