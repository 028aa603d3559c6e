import IntercomCore
import IntercomDSP
import Testing
import TestSupport

@Suite struct BadInputTests {
    @Test(arguments: [0, 1, 479, 481, 960])
    func encoderRejectsWrongFrameSizes(samples: Int) throws {
        let encoder = try OpusEncoder()  // 10 ms: 480 samples
        #expect(throws: OpusError.invalidFrameSize(got: samples, expected: 480)) {
            try encoder.encode([Float](repeating: 0, count: samples))
        }
    }

    @Test func outOfRangeSettingsAreTypedErrors() {
        var configuration = OpusEncoderConfiguration()
        configuration.bitrate = 100
        #expect(throws: OpusError.self) { try OpusEncoder(configuration: configuration) }
        configuration = .init()
        configuration.complexity = 11
        #expect(throws: OpusError.self) { try OpusEncoder(configuration: configuration) }
        configuration = .init()
        configuration.frameMilliseconds = 15
        #expect(throws: OpusError.self) { try OpusEncoder(configuration: configuration) }
        configuration = .init()
        configuration.expectedLossPercent = 101
        #expect(throws: OpusError.self) { try OpusEncoder(configuration: configuration) }
    }

    @Test func emptyPacketIsATypedError() throws {
        let decoder = try OpusDecoder()
        #expect(throws: OpusError.emptyPacket) { try decoder.decode([]) }
        #expect(throws: OpusError.emptyPacket) { try decoder.recover(samples: 480, fromNext: []) }
    }

    @Test func invalidPacketCarriesLibopusMessage() throws {
        let decoder = try OpusDecoder()
        // TOC code 3 (arbitrary frame count) with a frame count of zero is invalid.
        let result = Result { () throws(OpusError) in try decoder.decode([0x03, 0x00]) }
        guard case .failure(let error) = result, case .library(let code, let message) = error else {
            Issue.record("an invalid packet gave \(result)")
            return
        }
        #expect(code < 0)
        #expect(message.contains("corrupted"), "\(message)")
    }

    @Test func randomBytesNeverCrashTheDecoder() throws {
        let decoder = try OpusDecoder()
        var noise = SeededNoise(seed: 7)
        var decodedCount = 0
        for _ in 0..<5_000 {
            let length = Int(noise.next() % 200) + 1
            let packet = (0..<length).map { _ in UInt8(truncatingIfNeeded: noise.next()) }
            do {
                let samples = try decoder.decode(packet)
                #expect(samples.count <= OpusDecoder.maximumFrameSamples)
                decodedCount += 1
            } catch {
                // Rejected with a typed OpusError (the signature allows no other): what we want for garbage.
            }
        }
        #expect(decodedCount < 5_000)
    }

    @Test func lossDurationsMustBeMultiplesOf2_5ms() throws {
        let decoder = try OpusDecoder()
        #expect(throws: OpusError.self) { try decoder.conceal(samples: 100) }
        #expect(throws: OpusError.self) { try decoder.conceal(samples: 0) }
        #expect(try decoder.conceal(samples: 120).count == 120)
    }

    @Test func speexComponentsRejectBadSettings() throws {
        // A frame shorter than one sample at the canceller's rate (a frame of no samples cannot be made).
        #expect(throws: SpeexError.self) { try EchoCanceller(frameLength: FrameLength(samples: 1), tailMilliseconds: 100, sampleRate: 8_000) }
        #expect(throws: SpeexError.self) { try EchoCanceller(frameLength: .milliseconds(10), tailMilliseconds: 0) }
        #expect(throws: SpeexError.self) { try Resampler(inputRate: 0, outputRate: 48_000) }
        #expect(throws: SpeexError.self) { try Resampler(inputRate: 44_100, outputRate: 48_000, quality: 11) }
        let canceller = try EchoCanceller(frameLength: .milliseconds(10), tailMilliseconds: 100)
        #expect(throws: SpeexError.invalidFrameSize(got: 10, expected: 480)) {
            try canceller.cancel(capture: [Int16](repeating: 0, count: 10), reference: [Int16](repeating: 0, count: 480))
        }
        #expect(throws: SpeexError.self) { try Preprocessor(frameLength: .milliseconds(20), echoCanceller: canceller) }
        let preprocessor = try Preprocessor(frameLength: .milliseconds(10))
        var short = [Int16](repeating: 0, count: 100)
        #expect(throws: SpeexError.self) { try preprocessor.process(&short) }
        var configuration = PreprocessorConfiguration()
        configuration.noiseSuppressionDB = 10
        #expect(throws: SpeexError.self) { try preprocessor.apply(configuration) }
        let resampler = try Resampler(inputRate: 48_000, outputRate: 48_000)
        #expect(throws: SpeexError.self) { try resampler.adjust(ppm: 1_000_000) }
    }
}
