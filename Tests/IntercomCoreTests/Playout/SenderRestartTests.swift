import IntercomCore
import Testing

@Suite struct SenderRestartTests {
    /// A sender that starts its numbering over under the same SSRC, backwards or forwards:
    /// playback resumes within a few frames instead of counting every packet as late.
    @Test(arguments: [(UInt16(40_000), UInt16(1_000)), (UInt16(1_000), UInt16(40_000))])
    func playbackResumesAfterTheSenderRestartsItsNumbering(numbering: (UInt16, UInt16)) {
        var buffer = JitterBuffer(configuration: JitterBufferConfiguration(frameLength: .milliseconds(10)))
        let period: UInt64 = 10_000_000
        var decodedAfterRestart: [UInt8] = []
        for slot in 0..<400 {
            let now = 1_000_000_000 + UInt64(slot) * period
            let restarted = slot >= 200
            let index = restarted ? slot - 200 : slot
            let first = restarted ? numbering.1 : numbering.0
            buffer.insert(
                sequenceNumber: first &+ UInt16(index), timestamp: (restarted ? 7_000_000 : 0) &+ UInt32(index * 480),
                marker: index == 0, payload: [FramePayload.toc(samples: 480), UInt8(truncatingIfNeeded: index), restarted ? 1 : 0], arrivalTime: now
            )
            let (decision, _) = buffer.nextFrame(now: now)
            if case .decode(let payload) = decision, payload[2] == 1 { decodedAfterRestart.append(payload[1]) }
        }
        // 200 frames were sent after the restart: nearly all of them play, in order.
        #expect(decodedAfterRestart.count > 180, "\(decodedAfterRestart.count) played after the restart")
        #expect(decodedAfterRestart == decodedAfterRestart.sorted())
        #expect(buffer.statistics.late < 10)
    }
}
