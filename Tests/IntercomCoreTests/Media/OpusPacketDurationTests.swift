import IntercomCore
import Testing

@Suite("Opus packet duration")
struct OpusPacketDurationTests {
    /// RFC 6716 §3.1's table: configuration → frame length, and the frame-count codes.
    @Test(arguments: [
        ([0 << 3], 480), ([1 << 3], 960), ([2 << 3], 1_920), ([3 << 3], 2_880),  // SILK NB
        ([11 << 3], 2_880), ([12 << 3], 480), ([15 << 3], 960),  // SILK WB 60 ms, hybrid
        ([16 << 3], 120), ([17 << 3], 240), ([30 << 3], 480), ([31 << 3], 960),  // CELT
        ([17 << 3 | 1, 0], 480), ([18 << 3 | 2, 0], 960),  // two frames
        ([16 << 3 | 3, 0x06], 720), ([19 << 3 | 3, 0x86], 5_760),  // code 3: count in byte 2 (padding and VBR flags above)
    ] as [([UInt8], Int)])
    func readsTheLengthFromTheTableOfContents(packet: [UInt8], samples: Int) {
        #expect(OpusPacketDuration.samples(of: packet) == samples)
    }

    @Test func refusesWhatNoOpusPacketIs() {
        #expect(OpusPacketDuration.samples(of: [UInt8]()) == nil)
        #expect(OpusPacketDuration.samples(of: [19 << 3 | 3]) == nil, "code 3 without its count")
        #expect(OpusPacketDuration.samples(of: [19 << 3 | 3, 0]) == nil, "no frames")
        #expect(OpusPacketDuration.samples(of: [19 << 3 | 3, 7]) == nil, "140 ms")
    }
}
