import Foundation
import IntercomCore
import Testing
import TestSupport

extension EndToEndTests {
    /// `--profile pi`: fixed 20 ms frames at 48 kb/s, so a quarter of the packets of the
    /// low-delay path and half the bits, and the call still heard; options given with it win.
    @Suite struct PiProfileCallTests {
        @Test func thePiProfileSendsTwentyMillisecondFramesAtFortyEightKilobitsAndIsHeard() throws {
            let run = try CallFixtures.twoPeerCall(speaker: ["--profile", "pi"], listener: [], text: SpeechFixture.paragraph)
            let seconds = Double(run.input.count) / 48_000
            let sent = run.speaker.sentPackets
            // At most one packet per 20 ms of input (DTX skips most of the pauses); a file
            // call's default frames would be 10 ms.
            #expect(sent > Int(seconds * 20) && sent <= Int(seconds * 50) + 5, "\(sent) packets for \(seconds) s")
            // The packets' Opus bits per second of the frames they carry: about 48 kb/s (VBR
            // spends more on speech than on the few pauses still sent), far from the default 96.
            let bitsPerSecond = Double(run.speaker.sentPayloadBytes * 8) / (Double(sent) * 0.020)
            #expect(bitsPerSecond > 24_000 && bitsPerSecond < 64_000, "\(bitsPerSecond) b/s")
            #expect(CallFixtures.correlation(run) > 0.8)

            // A frame length given on the command line wins over the profile's.
            let given = try CallFixtures.twoPeerCall(speaker: ["--profile", "pi", "--frame-ms", "10"], listener: [])
            let givenSeconds = Double(given.input.count) / 48_000
            #expect(given.speaker.sentPackets > Int(givenSeconds * 60), "\(given.speaker.sentPackets) packets for \(givenSeconds) s")
        }
    }
}
