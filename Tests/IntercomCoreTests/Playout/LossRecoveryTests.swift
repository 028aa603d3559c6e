import IntercomCore
import Testing

struct LossRecoveryTests {
    struct Row: CustomTestStringConvertible {
        let name: String
        let loss: LossModel
        var frameSamples = 480
        var seed: UInt64 = 7
        var testDescription: String { name }
    }

    @Test(arguments: [
        Row(name: "5 % random loss", loss: .random(rate: 0.05)),
        Row(name: "10 % random loss", loss: .random(rate: 0.10)),
        Row(name: "5 % loss in bursts of 3", loss: .bursts(rate: 0.05, meanBurst: 3)),
        Row(name: "10 % loss in bursts of 3", loss: .bursts(rate: 0.10, meanBurst: 3)),
        Row(name: "10 % random loss, 20 ms frames", loss: .random(rate: 0.10), frameSamples: 960),
        Row(name: "10 % loss in bursts of 3, 20 ms frames", loss: .bursts(rate: 0.10, meanBurst: 3), frameSamples: 960, seed: 8),
    ])
    func lostFramesAreRecoveredByFECOrConcealed(_ row: Row) {
        let sender = FakeSender(frameSamples: row.frameSamples)
        let packets = sender.packets(slots: Int(60 * second / sender.frameDuration))
        let network = NetworkRun(packets: packets, conditions: NetworkConditions(loss: row.loss), clock: ReceiverClock(), seed: row.seed)
        let (stream, decoder) = makeRecordingStream(JitterBufferConfiguration(frameLength: FrameLength(samples: row.frameSamples)))
        let statistics = playOutAndCheck(stream, decoder: decoder, sent: packets.count, network: network)
        #expect(statistics.late == 0)
        #expect(statistics.lost == network.lostIndices.count)
        #expect(Double(statistics.lost) / Double(packets.count) > 0.5 * Self.rate(of: row.loss))

        // Between two decoded frames a and b: one entry per missing frame, the last one FEC from b,
        // the others concealment (then silence once 100 ms have been concealed).
        let concealmentLimit = 100 * Int(millisecond) / Int(MediaTime.nanoseconds(frames: row.frameSamples, rate: VoiceFormat.sampleRate))
        var lossRuns = 0
        var previousDecoded: (index: Int, position: Int)?
        for (position, entry) in decoder.log.enumerated() {
            guard case .decoded(let index) = entry else { continue }
            defer { previousDecoded = (index, position) }
            guard let previous = previousDecoded, index > previous.index + 1 else { continue }
            lossRuns += 1
            let between = Array(decoder.log[(previous.position + 1)..<position])
            let missing = index - previous.index - 1
            #expect(between.last == .recovered(index - 1), "run \(previous.index)→\(index): \(between)")
            #expect(between.count(of: .concealed) == min(missing - 1, concealmentLimit), "run \(previous.index)→\(index): \(between)")
            #expect(between.count == missing, "run \(previous.index)→\(index): \(between)")
        }
        #expect(statistics.recoveredByFEC == lossRuns)
    }

    static func rate(of loss: LossModel) -> Double {
        switch loss {
        case .none: 0
        case .random(let rate), .bursts(let rate, _): rate
        }
    }
}
