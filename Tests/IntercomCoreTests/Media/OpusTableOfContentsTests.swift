import IntercomCore
import Testing

@Suite("Opus table of contents")
struct OpusTableOfContentsTests {
    /// RFC 6716 §3.1's table: configuration → frame length, and the frame-count codes.
    @Test(arguments: [
        ([0 << 3], 480), ([1 << 3], 960), ([2 << 3], 1_920), ([3 << 3], 2_880),  // SILK NB
        ([11 << 3], 2_880), ([12 << 3], 480), ([15 << 3], 960),  // SILK WB 60 ms, hybrid
        ([16 << 3], 120), ([17 << 3], 240), ([30 << 3], 480), ([31 << 3], 960),  // CELT
        ([17 << 3 | 1, 0], 480), ([18 << 3 | 2, 0], 960),  // two frames
        ([16 << 3 | 3, 0x06], 720), ([19 << 3 | 3, 0x86], 5_760),  // code 3: count in byte 2 (padding and VBR flags above)
    ] as [([UInt8], Int)])
    func readsTheLengthFromTheTableOfContents(packet: [UInt8], samples: Int) {
        #expect(OpusTableOfContents.samples(of: packet) == samples)
    }

    @Test func refusesWhatNoOpusPacketIs() {
        #expect(OpusTableOfContents.samples(of: [UInt8]()) == nil)
        #expect(OpusTableOfContents.samples(of: [19 << 3 | 3]) == nil, "code 3 without its count")
        #expect(OpusTableOfContents.samples(of: [19 << 3 | 3, 0]) == nil, "no frames")
        #expect(OpusTableOfContents.samples(of: [19 << 3 | 3, 7]) == nil, "140 ms")
    }

    /// SILK (configurations 0-11) and hybrid (12-15) frames may carry FEC; CELT (16-31) never.
    @Test func tellsWhichModesMayCarryFEC() {
        for configuration: UInt8 in 0..<32 {
            #expect(OpusTableOfContents.mayCarryFEC([configuration << 3 | 1, 0]) == (configuration < 16), "configuration \(configuration)")
        }
        #expect(!OpusTableOfContents.mayCarryFEC([UInt8]()))
    }
}
