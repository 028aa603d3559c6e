import IntercomCore
import Testing

/// The whole receive chain (jitter buffer → recording decoder → linear rate adjuster) over a seeded network.
struct ReceiveStreamNetworkTests {
    struct Row: CustomTestStringConvertible {
        let name: String
        var conditions = NetworkConditions()
        var frameSamples = 480
        var firstSequenceNumber: UInt16 = 0
        var firstTimestamp: UInt32 = 0
        var seed: UInt64 = 1
        var testDescription: String { name }
    }

    /// Runs 60 s of speech through the network and the stream, then drains it.
    static func run(_ row: Row) -> (log: [RenderedFrame], statistics: JitterBufferStatistics, network: NetworkRun, sent: Int, produced: Int, pulls: Int) {
        let sender = FakeSender(frameSamples: row.frameSamples, firstSequenceNumber: row.firstSequenceNumber, firstTimestamp: row.firstTimestamp)
        let packets = sender.packets(slots: Int(60 * second / sender.frameDuration))
        let network = NetworkRun(packets: packets, conditions: row.conditions, clock: ReceiverClock(), seed: row.seed)
        let (stream, decoder) = makeRecordingStream(JitterBufferConfiguration(frameLength: FrameLength(samples: row.frameSamples)))
        let simulation = PlayoutSimulation()
        let pulls = simulation.pulls(toDrain: network.deliveries)
        let produced = simulation.run(stream, deliveries: network.deliveries, pulls: pulls)
        return (decoder.log, stream.statistics, network, packets.count, produced, pulls)
    }

    @Test func cleanStreamPlaysEverythingInOrderNearTheMinimumDelay() {
        let result = Self.run(Row(name: "clean"))
        #expect(result.log.decodedIndices == Array(0..<result.sent))
        // Only the 100 ms tail after the last packet is concealed.
        #expect(result.log.count(of: .concealed) == 10)
        #expect(result.log.firstIndex(of: .concealed).map { $0 > result.log.lastIndex(of: .decoded(result.sent - 1))! } == true)
        #expect(result.statistics.lost == 0 && result.statistics.late == 0)
        #expect(result.produced == result.pulls * 480)
        // Minimum 0 + one frame of margin + the FIFO allowance (one pull) + the 1 ms histogram resolution.
        #expect(result.statistics.targetDelay <= 22 * millisecond)
        let error = Int64(result.statistics.currentDelay) - Int64(result.statistics.targetDelay)
        #expect(abs(error) < Int64(millisecond), "delay \(result.statistics.currentDelay) target \(result.statistics.targetDelay)")
    }

    @Test(arguments: [
        Row(name: "every 50th packet swapped with the next", conditions: NetworkConditions(displacements: Dictionary(uniqueKeysWithValues: stride(from: 50, to: 6_000, by: 50).map { ($0, 15 * millisecond) }))),
        Row(name: "every 100th packet displaced by 3", conditions: NetworkConditions(displacements: Dictionary(uniqueKeysWithValues: stride(from: 100, to: 6_000, by: 100).map { ($0, 35 * millisecond) }))),
        Row(name: "2 % duplicated", conditions: NetworkConditions(duplicateRate: 0.02)),
        Row(name: "2 % duplicated 100 ms later", conditions: NetworkConditions(duplicateRate: 0.02, duplicateDelay: 100 * millisecond)),
        Row(name: "1 % late by 400 ms", conditions: NetworkConditions(lateSpikeRate: 0.01, lateSpikeDelay: 400 * millisecond)),
        Row(name: "reordering, duplicates and late spikes together", conditions: NetworkConditions(
            jitter: 12 * millisecond, duplicateRate: 0.02, lateSpikeRate: 0.005, lateSpikeDelay: 300 * millisecond
        )),
    ])
    func reorderingDuplicatesAndLatePackets(_ row: Row) {
        let result = Self.run(row)
        expectConsistentPlayout(result.log, result.statistics, sent: result.sent, network: result.network)
        #expect(result.produced == result.pulls * 480)
        // Packets held back beyond the maximum delay can only be late; everything else must be played after adapting.
        let hopelesslyLate = result.network.deliveries.filter { $0.arrival - $0.packet.sendTime > 1 * second + 200 * millisecond }
        let uniqueHopeless = Set(hopelesslyLate.map(\.packet.index)).count
        #expect(result.statistics.late >= uniqueHopeless - result.network.duplicates)
        #expect(result.statistics.late <= uniqueHopeless + 3, "late \(result.statistics.late), hopeless \(uniqueHopeless)")
    }
}
