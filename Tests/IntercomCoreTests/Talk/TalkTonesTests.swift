import Foundation
import IntercomCore
import Testing

@Suite struct TalkTonesTests {
    /// Frequency of one 40 ms note from its zero crossings.
    static func frequency(_ samples: ArraySlice<Float>) -> Double {
        let crossings = zip(samples, samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        return Double(crossings) / (Double(samples.count) / 48_000)
    }

    @Test func startRisesAndEndFalls() {
        let start = TalkTones.start()
        let end = TalkTones.end()
        #expect(start.count == 3_840 && end.count == 3_840)
        #expect(abs(Self.frequency(start[0..<1_920]) - 880) < 60)
        #expect(abs(Self.frequency(start[1_920...]) - 1_320) < 60)
        #expect(abs(Self.frequency(end[0..<1_920]) - 1_320) < 60)
        #expect(start.allSatisfy { abs($0) <= 0.2001 })
        // Soft edges: no click at the start or between the notes.
        #expect(abs(start[0]) < 0.01 && abs(start[1_919]) < 0.01)
        #expect(abs(zip(start, TalkTones.start()).map { $0 - $1 }.max() ?? 1) < 1e-6)
        #expect(abs(Double(start[100]) - 0.2 * sin(2 * Double.pi * 880 * 100 / 48_000) * Double(min(1, 100.0 / 192))) < 1e-4)
    }
}
