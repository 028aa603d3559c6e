import Foundation
import IntercomCore
import IntercomDSP
@testable import IntercomCall
import Testing

/// The cleaning stages delay the microphone by one 5 ms block (and, with echo cancelling, the
/// residual echo suppressor's 1 ms), not by a whole frame.
@Suite struct MicrophoneCleanerTests {
    @Test(arguments: [480, 960])
    func aSoundComesOutOfTheCleanerOneBlockAndAMillisecondLater(frameSamples: Int) throws {
        let cleaner = try MicrophoneCleaner(frameLength: FrameLength(samples: frameSamples), settings: PreprocessorConfiguration(), echoModel: .init(tailMilliseconds: 150, cancelsDistortion: false))
        // A tone that starts in the middle of a frame, after a second of silence.
        let onset = 48_000 + frameSamples / 2 + 17
        let silence = [Int16](repeating: 0, count: frameSamples)
        var heardAt: Int?
        for index in 0..<(2 * 48_000 / frameSamples) {
            var frame = (0..<frameSamples).map { offset -> Int16 in
                let sample = index * frameSamples + offset
                return sample < onset ? 0 : Int16(8_000 * sin(Double(sample) * 0.1))
            }
            _ = try cleaner.clean(&frame, reference: silence, echoDelaySamples: nil)
            if heardAt == nil, let offset = frame.firstIndex(where: { abs(Int($0)) > 500 }) {
                heardAt = index * frameSamples + offset
            }
        }
        let delay = try #require(heardAt) - onset
        let allowed = 240 + MicrophoneCleaner.residualEchoCrossfadeSamples
        #expect(delay >= 0 && delay <= allowed, "delayed by \(delay) samples, more than 6 ms")
    }
}
