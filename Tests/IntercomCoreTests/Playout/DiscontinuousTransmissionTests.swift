import IntercomCore
import Testing

/// A sender using DTX: 1 s talk spurts separated by 0.5 s without packets, 20 ms frames.
struct DiscontinuousTransmissionTests {
    @Test func gapsArePlayedAsComfortSilenceNotLoss() {
        let talk = 50
        let sender = FakeSender(frameSamples: 960, talkPattern: (talk: talk, silence: 25))
        let packets = sender.packets(slots: 3_000)
        let network = NetworkRun(packets: packets, conditions: NetworkConditions(jitter: 4 * millisecond), clock: ReceiverClock(), seed: 5)
        let (stream, decoder) = makeRecordingStream(JitterBufferConfiguration(frameLength: .milliseconds(20)))
        var spurtStartErrors: [Int64] = []
        decoder.onRender = { frame in
            // Each talk spurt after the first must start exactly on the target: the silence before it absorbs any error.
            if case .decoded(let index) = frame, index % talk == 0, index > 0 {
                let statistics = stream.statistics
                spurtStartErrors.append(Int64(statistics.currentDelay) - Int64(statistics.targetDelay))
            }
        }
        let statistics = playOutAndCheck(stream, decoder: decoder, sent: packets.count, network: network)
        #expect(statistics.lost == 0 && statistics.late == 0 && statistics.recoveredByFEC == 0)
        #expect(decoder.log.decodedIndices == Array(0..<packets.count))
        #expect(spurtStartErrors.count == packets.count / talk - 1)
        #expect(spurtStartErrors.allSatisfy { abs($0) <= Int64(millisecond) }, "\(spurtStartErrors)")

        // Inside a spurt nothing but decoded frames; between spurts at most 100 ms of concealment, then silence.
        var previousDecoded: (index: Int, position: Int)?
        for (position, entry) in decoder.log.enumerated() {
            guard case .decoded(let index) = entry else { continue }
            defer { previousDecoded = (index, position) }
            guard let previous = previousDecoded else { continue }
            let between = decoder.log[(previous.position + 1)..<position]
            if index % talk == 0 {
                #expect(between.count(of: .concealed) <= 5)
                #expect(between.count(of: .silence) >= 10)
            } else {
                #expect(between.isEmpty, "inside a talk spurt at \(index): \(Array(between))")
            }
        }
    }
}
