import IntercomCore
import Testing

struct WraparoundTests {
    struct Row: CustomTestStringConvertible {
        let name: String
        let firstSequenceNumber: UInt16
        let firstTimestamp: UInt32
        var testDescription: String { name }
    }

    @Test(arguments: [
        Row(name: "sequence numbers wrap", firstSequenceNumber: 65_500, firstTimestamp: 12_345),
        Row(name: "timestamps wrap", firstSequenceNumber: 100, firstTimestamp: UInt32.max - 100 * 480 + 1),
        Row(name: "both wrap, at different times", firstSequenceNumber: 65_535, firstTimestamp: UInt32.max - 3_000 * 480 + 1),
    ])
    func playsAcrossWraparound(_ row: Row) {
        let sender = FakeSender(firstSequenceNumber: row.firstSequenceNumber, firstTimestamp: row.firstTimestamp)
        let packets = sender.packets(slots: 6_000)
        let conditions = NetworkConditions(jitter: 8 * millisecond, loss: .random(rate: 0.05), duplicateRate: 0.01)
        let network = NetworkRun(packets: packets, conditions: conditions, clock: ReceiverClock(), seed: 11)
        let (stream, decoder) = makeRecordingStream()
        let statistics = playOutAndCheck(stream, decoder: decoder, sent: packets.count, network: network)
        #expect(statistics.late <= 3)
        #expect(decoder.log.playedIndices.last == packets.count - 1)
    }

    @Test func learnsTheFrameDurationFromTheStream() {
        // Configured for 10 ms, the sender uses 20 ms.
        let sender = FakeSender(frameSamples: 960)
        let packets = sender.packets(slots: 500)
        let network = NetworkRun(packets: packets, conditions: NetworkConditions(), clock: ReceiverClock(), seed: 1)
        let (stream, decoder) = makeRecordingStream(JitterBufferConfiguration(frameLength: .milliseconds(10)))
        let simulation = PlayoutSimulation()
        simulation.run(stream, deliveries: network.deliveries, pulls: simulation.pulls(toDrain: network.deliveries))

        #expect(decoder.log.decodedIndices == Array(0..<packets.count))
        // Once learned (two equal steps), frames follow each other without gaps.
        let firstSteady = decoder.log.firstIndex(of: .decoded(3))!
        let steadyUntil = decoder.log.firstIndex(of: .decoded(packets.count - 1))!
        #expect(decoder.log[firstSteady...steadyUntil].allSatisfy { if case .decoded = $0 { true } else { false } })
    }
}
