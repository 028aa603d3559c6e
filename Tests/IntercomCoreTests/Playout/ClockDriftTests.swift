import IntercomCore
import Testing

/// 30 simulated minutes of continuous speech with the receiver's clock off by ±500 ppm.
struct ClockDriftTests {
    static let minutes = 30
    static let settling = 5 * 60

    @Test(arguments: [500e-6, -500e-6])
    func delayHoldsItsTargetUnderClockDrift(_ drift: Double) {
        let sender = FakeSender()
        let frames = Self.minutes * 60 * 100
        let packets = sender.packets(slots: frames)
        let clock = ReceiverClock(drift: drift)
        let network = NetworkRun(packets: packets, conditions: NetworkConditions(jitter: 2 * millisecond), clock: clock, seed: 3)
        let (stream, decoder) = makeRecordingStream()
        // The receiver plays 1/(1+drift) of a sender second per second of its own clock.
        let expectedRatio = 1 / (1 + drift)

        var worstDelayError: Int64 = 0
        var worstRatioError = 0.0
        var ratioSum = 0.0
        var ratioCount = 0
        let simulation = PlayoutSimulation()
        let pulls = Int(Double(frames) * (1 + drift)) - 100
        simulation.run(stream, deliveries: network.deliveries, pulls: pulls, afterPull: { pull in
            guard pull.index >= Self.settling * 100, pull.index % 10 == 0 else { return }
            let statistics = stream.statistics
            worstDelayError = max(worstDelayError, abs(Int64(statistics.currentDelay) - Int64(statistics.targetDelay)))
            worstRatioError = max(worstRatioError, abs(stream.playoutRateRatio - expectedRatio))
            ratioSum += stream.playoutRateRatio
            ratioCount += 1
        })

        let statistics = stream.statistics
        #expect(statistics.late == 0 && statistics.concealed == 0 && statistics.lost == 0, "late \(statistics.late) concealed \(statistics.concealed) lost \(statistics.lost)")
        // Every frame up to the end of the run, in order, none skipped.
        #expect(decoder.log.decodedIndices == Array(0..<decoder.log.decodedIndices.count))
        #expect(decoder.log.decodedIndices.count > frames - 200)
        #expect(worstDelayError <= Int64(10 * millisecond), "worst delay error \(worstDelayError) ns")
        // The ratio has learned the drift: it wobbles by a few ppm around 1/(1+drift), not by its ±0.5 % range.
        #expect(worstRatioError < 0.000_05, "worst ratio error \(worstRatioError)")
        #expect(abs(ratioSum / Double(ratioCount) - expectedRatio) < 0.000_005, "mean ratio \(ratioSum / Double(ratioCount))")
    }
}
