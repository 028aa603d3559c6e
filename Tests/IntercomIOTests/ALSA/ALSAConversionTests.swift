import Foundation
import IntercomCore
@testable import IntercomIO
import Testing
import TestSupport

/// A lab device that offers exactly one rate, channel count and sample format, as a sound
/// card with fixed hardware does (scripts/lab/audio/fixed-format-pcm.c).
struct FixedFormatDevice: Sendable, CustomTestStringConvertible {
    let name: String
    let sampleRate: Int
    let channels: Int
    let format: ALSASampleFormat

    var testDescription: String { "\(name): \(sampleRate) Hz, \(channels) ch, \(format.rawValue)" }

    static let all = [
        FixedFormatDevice(name: "44k", sampleRate: 44_100, channels: 1, format: .s16),
        FixedFormatDevice(name: "stereo", sampleRate: 48_000, channels: 2, format: .s16),
        FixedFormatDevice(name: "pi", sampleRate: 44_100, channels: 2, format: .s16),
        FixedFormatDevice(name: "s32", sampleRate: 48_000, channels: 1, format: .s32),
        FixedFormatDevice(name: "float", sampleRate: 48_000, channels: 1, format: .float),
        FixedFormatDevice(name: "s24", sampleRate: 48_000, channels: 1, format: .s24),
        FixedFormatDevice(name: "s24_3", sampleRate: 48_000, channels: 1, format: .s24Packed),
    ]
}

@Suite(needsAudioLab) struct ALSAConversionTests {
    /// Speech played through the device comes back through the same device: both directions
    /// convert, and the level and the words survive.
    @Test(arguments: FixedFormatDevice.all)
    func deviceWithOneFixedFormatWorksBothWays(_ device: FixedFormatDevice) async throws {
        let lab = try await AudioLab.start(devices: [device.name])
        defer { lab.stop() }
        let speech = try SpeechFixture.speech("The quick brown fox jumps over the lazy dog.")
        let name = lab.alsaName(device.name)

        let (heard, played) = try await onAudioThread {
            try whileCapturing(from: name) { try playAudio(speech, to: name) }
        }

        for report in [played, heard] {
            let negotiated = try #require(report.negotiated)
            #expect(negotiated.sampleRate == device.sampleRate)
            #expect(negotiated.channels == device.channels)
            #expect(negotiated.sampleFormat == device.format)
            #expect(negotiated.isResampled == (device.sampleRate != 48_000))
            #expect(!negotiated.conversions.isEmpty, "the conversion path is taken: \(negotiated)")
        }
        let match = locate(speech, in: heard.samples, maximumLag: 96_000)
        #expect(match.correlation > 0.95, "speech survives both conversions: \(match), xruns \(played.counters.xruns) + \(heard.counters.xruns)")
        #expect(abs(match.gainDecibels) < 1, "at its level")
    }

    @Test func negotiatedFormatSaysWhatIsConverted() {
        let format = ALSANegotiatedFormat(
            direction: .capture, sampleRate: 44_100, channels: 2, sampleFormat: .s32, periodFrames: 441, bufferFrames: 1764
        )
        #expect(format.conversions == ["resampled 44100 → 48000 Hz", "2 channels mixed to mono", "S32_LE samples"])
        #expect(format.description.hasPrefix("44100 Hz, 2 ch, S32_LE, period 441 frames (10.0 ms), buffer 1764 frames (40.0 ms)"))
    }
}

/// Sample formats converted without a device.
@Suite struct ALSASampleFormatTests {
    @Test(arguments: ALSASampleFormat.allCases)
    func samplesSpreadOverChannelsMixBackUnchanged(_ format: ALSASampleFormat) {
        let samples: [Float] = [0, 0.5, -0.5, 0.25, -1, 0.999, 0.001, -0.123]
        let channels = 3
        var bytes = [UInt8](repeating: 0xAA, count: samples.count * channels * format.bytesPerSample)
        var mixed = [Float](repeating: 9, count: samples.count)
        bytes.withUnsafeMutableBytes { raw in
            samples.withUnsafeBufferPointer { format.spread($0.baseAddress!, frames: samples.count, channels: channels, into: raw.baseAddress!) }
            mixed.withUnsafeMutableBufferPointer {
                format.mixToMono(raw.baseAddress!, frames: samples.count, channels: channels, into: $0.baseAddress!)
            }
        }
        for (original, back) in zip(samples, mixed) {
            #expect(abs(original - back) <= 1.0 / 32_768, "\(original) came back as \(back)")
        }
    }

    @Test func channelsMixToTheirAverage() {
        let stereo: [Int16] = [16_384, 0, -8_192, 8_192]
        var mono = [Float](repeating: 0, count: 2)
        stereo.withUnsafeBytes { raw in
            mono.withUnsafeMutableBufferPointer {
                ALSASampleFormat.s16.mixToMono(raw.baseAddress!, frames: 2, channels: 2, into: $0.baseAddress!)
            }
        }
        #expect(mono == [0.25, 0])
    }

    @Test func twentyFourBitSamplesKeepTheirSign() {
        // Most negative and most positive 24-bit values; the padding byte of S24_LE is ignored.
        let packed: [UInt8] = [0x00, 0x00, 0x80, 0xFF, 0xFF, 0x7F]
        let padded: [UInt8] = [0x00, 0x00, 0x80, 0x00, 0xFF, 0xFF, 0x7F, 0xFF]
        for (format, bytes) in [(ALSASampleFormat.s24Packed, packed), (.s24, padded)] {
            var mono = [Float](repeating: 0, count: 2)
            bytes.withUnsafeBytes { raw in
                mono.withUnsafeMutableBufferPointer { format.mixToMono(raw.baseAddress!, frames: 2, channels: 1, into: $0.baseAddress!) }
            }
            #expect(mono[0] == -1)
            #expect(abs(mono[1] - 1) < 1e-6)
        }
    }

    @Test(arguments: ALSASampleFormat.allCases)
    func samplesOutsideTheRangeClipAndNaNIsSilence(_ format: ALSASampleFormat) {
        let samples: [Float] = [3, -3, .nan]
        var bytes = [UInt8](repeating: 0, count: samples.count * format.bytesPerSample)
        var back = [Float](repeating: 9, count: samples.count)
        bytes.withUnsafeMutableBytes { raw in
            samples.withUnsafeBufferPointer { format.spread($0.baseAddress!, frames: samples.count, channels: 1, into: raw.baseAddress!) }
            back.withUnsafeMutableBufferPointer { format.mixToMono(raw.baseAddress!, frames: samples.count, channels: 1, into: $0.baseAddress!) }
        }
        #expect(back[0] > 0.999 && back[0] <= 1)
        #expect(back[1] == -1)
        #expect(back[2] == 0)
    }
}
