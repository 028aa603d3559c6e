import IntercomCore
import Testing

/// A frame's length, made from milliseconds or samples, seen as a duration and at other rates.
@Suite struct FrameLengthTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let milliseconds: Int
        let samples: Int
        let at16kHz: Int
        let nanoseconds: UInt64
        var testDescription: String { "\(milliseconds) ms" }
    }

    @Test(arguments: [
        Row(milliseconds: 5, samples: 240, at16kHz: 80, nanoseconds: 5_000_000),
        Row(milliseconds: 10, samples: 480, at16kHz: 160, nanoseconds: 10_000_000),
        Row(milliseconds: 20, samples: 960, at16kHz: 320, nanoseconds: 20_000_000),
    ])
    func aFrameIsTheSameLengthHoweverItIsCounted(_ row: Row) {
        let frame = FrameLength.milliseconds(row.milliseconds)
        #expect(frame == FrameLength(samples: row.samples))
        #expect(frame.samples == row.samples)
        #expect(frame.samples(atRate: 16_000) == row.at16kHz)
        #expect(frame.nanoseconds == row.nanoseconds)
        #expect(frame.duration == .milliseconds(row.milliseconds))
        #expect(frame.milliseconds == Double(row.milliseconds))
    }

    @Test func framesOrderByLengthAndDescribeThemselvesInMilliseconds() {
        #expect(FrameLength.milliseconds(5) < .milliseconds(10))
        #expect(FrameLength(samples: 120).description == "2.5 ms")
    }
}
