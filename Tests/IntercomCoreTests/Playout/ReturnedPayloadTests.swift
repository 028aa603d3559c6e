import IntercomCore
import Testing

/// Every payload handed to a stream comes back exactly once, decoded or discarded (late,
/// duplicate, pushed out), so that its storage can be used again and receiving allocates
/// nothing on a lossy, jittery link either.
struct ReturnedPayloadTests {
    /// Counts the payloads it decoded and the ones it was given back unplayed.
    final class PayloadCountingDecoder: FrameDecoder {
        private(set) var decoded = 0
        private(set) var discarded = 0

        func render(_ decision: consuming PlayoutDecision, samples: Int, into output: inout [Float]) {
            if case .decode(let payload) = decision {
                decoded += 1
                output = Array(repeating: 0, count: FramePayload.decode(payload).samples)
            } else {
                output = Array(repeating: 0, count: samples)
            }
        }

        func discard(_ payload: consuming [UInt8]) {
            discarded += 1
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func everyPayloadComesBackOnce(seed: UInt64) {
        let sender = FakeSender()
        let packets = sender.packets(slots: 6_000)
        // Duplicates, late spikes past the largest delay, jitter that reorders, loss.
        let conditions = NetworkConditions(
            jitter: 30 * millisecond, loss: .random(rate: 0.05), duplicateRate: 0.05, duplicateDelay: 40 * millisecond,
            lateSpikeRate: 0.02, lateSpikeDelay: 250 * millisecond
        )
        let deliveries = NetworkRun(packets: packets, conditions: conditions, clock: ReceiverClock(), seed: seed).deliveries
        let decoder = PayloadCountingDecoder()
        let stream = ReceiveStream(decoder: decoder, rateAdjuster: LinearRateAdjuster())
        let simulation = PlayoutSimulation()
        simulation.run(stream, deliveries: deliveries, pulls: simulation.pulls(toDrain: deliveries))
        let statistics = stream.statistics
        #expect(statistics.late > 0 && statistics.duplicated > 0, "late \(statistics.late), duplicated \(statistics.duplicated)")
        #expect(decoder.discarded == statistics.late + statistics.duplicated)
        #expect(
            decoder.decoded + decoder.discarded + stream.bufferedPacketCount == deliveries.count,
            "decoded \(decoder.decoded), discarded \(decoder.discarded), still buffered \(stream.bufferedPacketCount) of \(deliveries.count) delivered"
        )
    }

    /// A stream that ends (its sender said goodbye) gives back what was still waiting.
    @Test func anEndedStreamGivesBackWhatWasWaiting() {
        let packets = FakeSender().packets(slots: 50)
        let decoder = PayloadCountingDecoder()
        let mixer = StreamMixer { _ in (decoder, LinearRateAdjuster()) }
        for (index, packet) in packets.enumerated() {
            mixer.insert(
                ssrc: 7, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp, marker: packet.marker,
                payload: packet.payload, arrivalTime: 1_000_000_000 + UInt64(index) * 10 * millisecond
            )
        }
        #expect(decoder.decoded == 0 && decoder.discarded == 0)
        mixer.remove(ssrc: 7)
        #expect(decoder.discarded == packets.count)
    }
}
