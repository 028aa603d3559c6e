import IntercomCore
import Testing

struct SequenceUnwrapperTests {
    struct Row: CustomTestStringConvertible {
        let name: String
        let input: [UInt64]
        let expected: [Int64]
        var testDescription: String { name }
    }

    @Test(arguments: [
        Row(name: "in order", input: [10, 11, 12], expected: [10, 11, 12]),
        Row(name: "forward across the wrap", input: [65_534, 65_535, 0, 1], expected: [65_534, 65_535, 65_536, 65_537]),
        Row(name: "reordered across the wrap", input: [65_535, 1, 0, 2], expected: [65_535, 65_537, 65_536, 65_538]),
        Row(name: "backwards across the wrap", input: [1, 0, 65_535], expected: [1, 0, -1]),
        Row(name: "a jump just under half the range is forward", input: [0, 32_767], expected: [0, 32_767]),
        Row(name: "a jump of half the range is backward", input: [0, 32_768], expected: [0, -32_768]),
        Row(name: "wraps twice", input: [65_000, 20_000, 50_000, 10_000], expected: [65_000, 85_536, 115_536, 141_072]),
    ])
    func unwrapsSixteenBitSequenceNumbers(_ row: Row) {
        var unwrapper = SequenceUnwrapper<UInt16>()
        #expect(row.input.map { unwrapper.unwrap(UInt16($0)) } == row.expected)
    }

    @Test(arguments: [
        Row(name: "timestamps in order", input: [0, 960, 1_920], expected: [0, 960, 1_920]),
        Row(
            name: "timestamps across the wrap",
            input: [4_294_966_336, 0, 960], expected: [4_294_966_336, 4_294_967_296, 4_294_968_256]
        ),
        Row(
            name: "reordered timestamps across the wrap",
            input: [4_294_966_336, 960, 0], expected: [4_294_966_336, 4_294_968_256, 4_294_967_296]
        ),
        Row(name: "a long DTX gap stays forward", input: [4_294_000_000, 100_000_000], expected: [4_294_000_000, 4_394_967_296]),
    ])
    func unwrapsThirtyTwoBitTimestamps(_ row: Row) {
        var unwrapper = SequenceUnwrapper<UInt32>()
        #expect(row.input.map { unwrapper.unwrap(UInt32($0)) } == row.expected)
    }
}
