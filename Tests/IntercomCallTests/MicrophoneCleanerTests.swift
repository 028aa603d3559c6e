import Foundation
import IntercomCore
import IntercomDSP
@testable import IntercomCall
import Testing

/// The cleaning stages delay the microphone by one 5 ms block, the speech band's resampling
/// (1 ms) and, with echo cancelling, the residual echo suppressor's 1 ms: not by a whole frame.
@Suite struct MicrophoneCleanerTests {
    /// A tone in the speech band (764 Hz) and one above it (12 kHz, which the cleaning's gain
    /// carries round the 16 kHz stages): each comes out when the stages' delays say. (The
    /// high tone without the denoiser: its sudden start is a key click's, which the click
    /// suppressor holds down for its first 2 ms.)
    @Test(arguments: [480, 960], [0.1, 1.6])
    func aSoundComesOutOfTheCleanerWhenItSays(frameSamples: Int, radiansPerSample: Double) throws {
        var settings = PreprocessorConfiguration()
        settings.denoise = radiansPerSample < 1
        let cleaner = try MicrophoneCleaner(frameLength: FrameLength(samples: frameSamples), settings: settings, echoModel: .init(tailMilliseconds: 150, cancelsDistortion: false))
        // A tone that starts in the middle of a frame, after a second of silence.
        let onset = 48_000 + frameSamples / 2 + 17
        let silence = [Int16](repeating: 0, count: frameSamples)
        var heardAt: Int?
        for index in 0..<(2 * 48_000 / frameSamples) {
            var frame = (0..<frameSamples).map { offset -> Int16 in
                let sample = index * frameSamples + offset
                return sample < onset ? 0 : Int16(8_000 * sin(Double(sample) * radiansPerSample))
            }
            _ = try cleaner.clean(&frame, reference: silence, echoDelaySamples: nil)
            if heardAt == nil, let offset = frame.firstIndex(where: { abs(Int($0)) > 500 }) {
                heardAt = index * frameSamples + offset
            }
        }
        let delay = try #require(heardAt) - onset
        let expected = try SpeechBand(blockLength: FrameLength(samples: 240)).delaySamples + MicrophoneCleaner.residualEchoCrossfadeSamples
        #expect(expected == 240 + 48 + 48, "one block, 1 ms of resampling and 1 ms of crossfade")
        // The tone's first cycles come out through the filters' rise: a few samples either side.
        #expect(abs(delay - expected) <= 24, "delayed by \(delay) samples, where the stages add up to \(expected)")
    }
}
