import Foundation
import IntercomCore
import IntercomDSP
@testable import IntercomCall
import Testing

/// The cleaning stages delay the microphone by one block (5 ms, or the Pi profile's 10), not by
/// a whole frame.
@Suite struct MicrophoneCleanerTests {
    @Test(arguments: [(480, 240), (960, 240), (960, 480)])
    func aSoundComesOutOfTheCleanerOneBlockLater(frameSamples: Int, blockSamples: Int) throws {
        let cleaner = try MicrophoneCleaner(
            frameLength: FrameLength(samples: frameSamples), block: FrameLength(samples: blockSamples),
            settings: PreprocessorConfiguration(), echoTailMilliseconds: 150)
        // A tone that starts in the middle of a frame, after a second of silence.
        let onset = 48_000 + frameSamples / 2 + 17
        let silence = [Int16](repeating: 0, count: frameSamples)
        var heardAt: Int?
        for index in 0..<(2 * 48_000 / frameSamples) {
            var frame = (0..<frameSamples).map { offset -> Int16 in
                let sample = index * frameSamples + offset
                return sample < onset ? 0 : Int16(8_000 * sin(Double(sample) * 0.1))
            }
            _ = try cleaner.clean(&frame, reference: silence)
            if heardAt == nil, let offset = frame.firstIndex(where: { abs(Int($0)) > 500 }) {
                heardAt = index * frameSamples + offset
            }
        }
        let delay = try #require(heardAt) - onset
        #expect(delay >= 0 && delay <= blockSamples, "delayed by \(delay) samples, more than a block of \(blockSamples)")
    }
}
