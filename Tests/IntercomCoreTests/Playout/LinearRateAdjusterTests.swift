import IntercomCore
import Testing

struct LinearRateAdjusterTests {
    /// Feeds a ramp (input[i] = i) chunk by chunk, like `ReceiveStream` does, and returns everything produced.
    static func resampleRamp(ratio: Double, chunks: Int, chunkSize: Int) -> (output: [Float], consumed: Int) {
        let adjuster = LinearRateAdjuster()
        let ramp = (0..<(chunks * chunkSize * 3)).map(Float.init)
        var consumed = 0
        var output: [Float] = []
        for _ in 0..<chunks {
            var chunk = [Float](repeating: .nan, count: chunkSize)
            let needed = Int((Double(chunkSize) * ratio).rounded(.up)) + 2
            let used = ramp[consumed..<(consumed + needed)].withUnsafeBufferPointer { input in
                chunk.withUnsafeMutableBufferPointer { adjuster.adjust(input, into: $0, ratio: ratio) }
            }
            consumed += used
            output += chunk
        }
        return (output, consumed)
    }

    @Test(arguments: [1.0, 0.995, 1.005, 0.9995, 1.0005, 0.5, 2.0])
    func readsTheInputAtTheRatioAcrossCalls(_ ratio: Double) {
        let chunkSize = 480
        let chunks = 50
        let (output, consumed) = Self.resampleRamp(ratio: ratio, chunks: chunks, chunkSize: chunkSize)
        #expect(output.count == chunks * chunkSize)
        // On a ramp, output j must read position j × ratio: any lost or repeated phase between calls shows up here.
        let worstError = output.indices.map { abs(Double(output[$0]) - Double($0) * ratio) }.max() ?? .infinity
        #expect(worstError < 0.01)
        // Exactly what was read, up to the rounding of the carried phase.
        #expect(abs(consumed - Int(Double(chunks * chunkSize) * ratio)) <= 1)
    }

    @Test func holdsTheLastSampleWhenGivenTooLittleInput() {
        let adjuster = LinearRateAdjuster()
        var output = [Float](repeating: .nan, count: 8)
        let consumed = [Float](arrayLiteral: 1, 2, 3).withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { adjuster.adjust(input, into: $0, ratio: 1) }
        }
        #expect(output == [1, 2, 3, 3, 3, 3, 3, 3])
        #expect(consumed == 3)
    }
}
