import IntercomCore
import Testing

/// A clean link between equal clocks must play at exactly the rate it was sent, at one delay
/// from the first frame to the last; a stall of the sender or of a host, once, must not move it.
struct SteadyPlayoutTests {
    struct Row: CustomTestStringConvertible {
        let name: String
        var frameSamples = 480
        /// Uniform extra delay per packet, as thread scheduling adds on a quiet host.
        var jitter: UInt64 = 0
        /// Packets the receiver never hands to the jitter buffer at the start (RFC 3550 probation).
        var probation = 0
        var seed: UInt64 = 5
        var testDescription: String { name }
    }

    /// Runs 30 s of speech, pulled in frames of the stream's length unless `pullSamples` says
    /// otherwise; returns the recording, the stream, and the playout ratios of every pull.
    static func run(
        frameSamples: Int, conditions: NetworkConditions, probation: Int = 0, seed: UInt64, pullSamples: Int? = nil
    ) -> (log: [RenderedFrame], stream: ReceiveStream, ratios: [Double], targets: [UInt64], sent: Int) {
        let sender = FakeSender(frameSamples: frameSamples)
        let packets = sender.packets(slots: Int(30 * second / sender.frameDuration))
        let network = NetworkRun(packets: packets, conditions: conditions, clock: ReceiverClock(), seed: seed)
        let deliveries = network.deliveries.filter { $0.packet.index >= probation }
        let (stream, decoder) = makeRecordingStream(JitterBufferConfiguration(frameLength: FrameLength(samples: frameSamples)))
        var ratios: [Double] = []
        var targets: [UInt64] = []
        let simulation = PlayoutSimulation(pullSamples: pullSamples ?? frameSamples)
        simulation.run(stream, deliveries: deliveries, pulls: simulation.pulls(toDrain: deliveries), afterPull: { _ in
            ratios.append(stream.playoutRateRatio)
            targets.append(stream.statistics.targetDelay)

        })
        return (decoder.log, stream, ratios, targets, packets.count)
    }

    /// The frames decoded one after another from frame `first` on, up to the first frame that
    /// was concealed, silent or skipped; nil if `first` never played.
    static func playedBackToBack(_ log: [RenderedFrame], from first: Int) -> [Int]? {
        guard let start = log.firstIndex(of: .decoded(first)) else { return nil }
        return log[start...].prefix { if case .decoded = $0 { true } else { false } }.map { if case .decoded(let index) = $0 { index } else { -1 } }
    }

    @Test(arguments: [
        Row(name: "no jitter, 10 ms frames"),
        Row(name: "no jitter, 20 ms frames", frameSamples: 960),
        Row(name: "1 ms of scheduling jitter", jitter: 1 * millisecond),
        Row(name: "2 ms of scheduling jitter", jitter: 2 * millisecond, seed: 6),
        Row(name: "2 ms of scheduling jitter, 20 ms frames", frameSamples: 960, jitter: 2 * millisecond),
        Row(name: "first two packets held back by probation", probation: 2),
        Row(name: "no jitter, 5 ms low-delay frames", frameSamples: 240),
        Row(name: "1 ms of scheduling jitter, 5 ms low-delay frames", frameSamples: 240, jitter: 1 * millisecond),
    ])
    func cleanLinkPlaysAtExactlyTheSentRateAndOneDelay(_ row: Row) {
        let conditions = NetworkConditions(jitter: row.jitter, protectedEnds: 0)
        let result = Self.run(frameSamples: row.frameSamples, conditions: conditions, probation: row.probation, seed: row.seed)
        // Nothing before the first packet is concealment: the stream had not begun.
        let firstPlayed = result.log.firstIndex(of: .decoded(row.probation))
        #expect(firstPlayed != nil)
        #expect(result.log[..<(firstPlayed ?? 0)].allSatisfy { $0 == .silence }, "\(result.log.prefix(10))")
        // Then every frame in order, back to back: no concealment, no silence, nothing skipped.
        #expect(Self.playedBackToBack(result.log, from: row.probation) == Array(row.probation..<result.sent))
        #expect(result.stream.statistics.late == 0)
        // The rate never leaves 1, so each frame plays one constant delay after it was sent.
        #expect(result.ratios.allSatisfy { $0 == 1 }, "ratios \(Set(result.ratios).sorted().prefix(5))")
    }

    /// A frame of margin waits for the packet whose FEC rebuilds a lost frame: kept for the
    /// robust path's hybrid frames. The low-delay path's CELT frames carry no FEC: their margin
    /// is only what packets wait for the device's next pull, which depends on where the pulls
    /// fall between arrivals. Either way the clean link plays back to back at one delay.
    @Test(arguments: [(17_500_000, 0...2_750_000), (20_250_000, 2_750_000...5_000_000)] as [(UInt64, ClosedRange<UInt64>)])
    func theMarginIsAFrameOnlyForPacketsThatMayCarryFEC(baseDelay: UInt64, expectedWait: ClosedRange<UInt64>) {
        // Packets sent every 5 ms (the robust ones every 10), arriving 0-2 ms apart from the
        // link's base delay; the device pulls every 5 ms, on the sender's grid shifted by the base delay.
        let conditions = NetworkConditions(baseDelay: baseDelay, jitter: 2 * millisecond, protectedEnds: 0)
        let lowDelay = Self.run(frameSamples: 240, conditions: conditions, seed: 5, pullSamples: 240)
        let robust = Self.run(frameSamples: 480, conditions: conditions, seed: 5, pullSamples: 240)
        for result in [lowDelay, robust] {
            #expect(Self.playedBackToBack(result.log, from: 0) == Array(0..<result.sent))
            #expect(result.ratios.allSatisfy { $0 == 1 })
        }
        let robustMargin = robust.stream.statistics.targetDelay - robust.stream.statistics.networkBudget
        let lowDelayMargin = lowDelay.stream.statistics.targetDelay - lowDelay.stream.statistics.networkBudget
        // The output queue's allowance is the same in both (the same pulls): the difference is the margins'.
        #expect(expectedWait.contains(lowDelayMargin + 10 * millisecond - robustMargin), "\(lowDelayMargin) against \(robustMargin)")
    }

    struct Stall: CustomTestStringConvertible {
        let name: String
        /// Frames held back at each stall, and the packet indices at which stalls begin.
        let frames: Int
        let starts: [Int]
        var testDescription: String { name }

        /// Every packet of a stall arrives together with the first packet after it.
        func displacements(frameDuration: UInt64) -> [Int: UInt64] {
            var displacements: [Int: UInt64] = [:]
            for start in starts {
                for held in 0..<frames { displacements[start + held] = UInt64(frames - held) * frameDuration }
            }
            return displacements
        }
    }

    @Test(arguments: [
        Stall(name: "one 30 ms stall", frames: 3, starts: [1_000]),
        Stall(name: "one 100 ms stall", frames: 10, starts: [1_000]),
        Stall(name: "one 150 ms stall", frames: 15, starts: [1_000]),
    ])
    func aLoneStallIsConcealedWithoutMovingTheDelay(_ stall: Stall) {
        let clean = Self.run(frameSamples: 480, conditions: NetworkConditions(protectedEnds: 0), seed: 1)
        let stalled = Self.run(
            frameSamples: 480,
            conditions: NetworkConditions(displacements: stall.displacements(frameDuration: 10 * millisecond), protectedEnds: 0),
            seed: 1
        )
        // Every frame after the stall plays at the very moment it would have without it.
        let after = stall.starts[0] + stall.frames
        for index in [after, after + 100, after + 1_000, clean.sent - 1] {
            #expect(stalled.log.firstIndex(of: .decoded(index)) == clean.log.firstIndex(of: .decoded(index)), "frame \(index)")
        }
        #expect(stalled.ratios.allSatisfy { $0 == 1 })
        #expect(stalled.targets.max() == clean.targets.max())
        // The held-back frames are concealed and dropped, but for the last two, which the
        // margin (a frame) and the output allowance (a pull) still bring in on time.
        let statistics = stalled.stream.statistics
        #expect((stall.frames - 2...stall.frames).contains(statistics.late), "late \(statistics.late)")
        // Each was concealed, up to the 100 ms limit of concealment; silence fills the rest.
        #expect(statistics.concealed - clean.stream.statistics.concealed == min(statistics.late, 10))
        let playedIndices = stalled.log.playedIndices
        #expect(zip(playedIndices, playedIndices.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func recurringStallsRaiseTheTarget() {
        let stall = Stall(name: "two 60 ms stalls 2 s apart", frames: 6, starts: [1_000, 1_200])
        let result = Self.run(
            frameSamples: 480,
            conditions: NetworkConditions(displacements: stall.displacements(frameDuration: 10 * millisecond), protectedEnds: 0),
            seed: 1
        )
        // Before the second stall, the target is what a clean link needs; right after it, it covers most of a stall.
        let secondStallEnds = Self.pullIndex(ofPacket: 1_206, in: result.log)
        #expect(result.targets[secondStallEnds - 50] <= 22 * millisecond)
        #expect(result.targets[secondStallEnds + 2] >= 50 * millisecond, "target \(result.targets[secondStallEnds + 2])")
    }

    /// With one frame per pull, the pull that played a packet is its entry in the log.
    static func pullIndex(ofPacket index: Int, in log: [RenderedFrame]) -> Int {
        log.firstIndex { $0.playedIndex.map { $0 >= index } ?? false }!
    }
}

extension RenderedFrame {
    var playedIndex: Int? {
        switch self {
        case .decoded(let index), .recovered(let index): index
        case .concealed, .silence: nil
        }
    }
}

