import IntercomCore
import Testing

@Suite("Codec mode")
struct CodecModeControllerTests {
    static let second: UInt64 = 1_000_000_000

    /// A report every second from `start`, each saying `loss` and `jitter`; voice heard every
    /// 10 ms throughout. Returns the mode after each report.
    static func run(
        _ controller: inout CodecModeController, reports: [(loss: Double, jitter: Double)], start: UInt64 = 0
    ) -> [CodecMode] {
        var modes: [CodecMode] = []
        for (index, report) in reports.enumerated() {
            let time = start + UInt64(index) * second
            controller.heard(speech: true, now: time)
            controller.reported(fractionLost: report.loss, jitterMilliseconds: report.jitter, now: time)
            modes.append(controller.mode(now: time))
        }
        return modes
    }

    @Test func aCleanLinkWithVoiceIsLowDelayFromTheFirstWord() {
        var controller = CodecModeController()
        #expect(controller.mode(now: 0) == .robust, "nothing heard yet: silence")
        controller.heard(speech: true, now: 0)
        #expect(controller.mode(now: 0) == .lowDelay, "no report yet: the first word is coded as on a clean link")
        #expect(Self.run(&controller, reports: Array(repeating: (0, 1), count: 3)) == [.lowDelay, .lowDelay, .lowDelay])
    }

    @Test func aTroubledFirstReportSwitchesToRobustAtOnce() {
        var controller = CodecModeController()
        controller.heard(speech: true, now: 0)
        controller.reported(fractionLost: 0.1, jitterMilliseconds: 30, now: Self.second / 4)
        #expect(controller.mode(now: Self.second / 4) == .robust)
    }

    @Test(arguments: [(0.01, 1.0), (0.0, 12.0), (0.5, 40.0)])
    func lossOrJitterSwitchesToRobustAtOnceAndCleanReportsBringLowDelayBack(loss: Double, jitter: Double) {
        var controller = CodecModeController()
        let modes = Self.run(&controller, reports: [(0, 1), (loss, jitter), (loss, jitter), (0, 1), (0, 1)])
        #expect(modes == [.lowDelay, .robust, .robust, .lowDelay, .lowDelay])
    }

    /// A report that follows a troubled one within the hold still counts the old trouble's
    /// moment; the first clean one after it ends the trouble.
    @Test func aCleanReportRightAfterTroubleDoesNotEndIt() {
        var controller = CodecModeController()
        controller.heard(speech: true, now: 0)
        controller.reported(fractionLost: 0.1, jitterMilliseconds: 0, now: 0)
        controller.reported(fractionLost: 0, jitterMilliseconds: 0, now: Self.second / 4)
        #expect(controller.mode(now: Self.second / 4) == .robust)
        controller.heard(speech: true, now: Self.second)
        controller.reported(fractionLost: 0, jitterMilliseconds: 0, now: Self.second)
        #expect(controller.mode(now: Self.second) == .lowDelay)
    }

    /// A stream sent to many devices stays in 10 ms frames on a clean link, and low delay comes
    /// back with the next frame once few hear it again.
    @Test func manyListenersKeepTheRobustFramesOnACleanLink() {
        var controller = CodecModeController()
        controller.heard(speech: true, now: 0)
        controller.fewListeners = false
        #expect(Self.run(&controller, reports: Array(repeating: (0, 1), count: 3)) == [.robust, .robust, .robust])
        controller.fewListeners = true
        #expect(controller.mode(now: 2 * Self.second) == .lowDelay)
    }

    @Test func silenceUsesTheRobustEncodersDTX() {
        var controller = CodecModeController()
        controller.reported(fractionLost: 0, jitterMilliseconds: 0, now: 0)
        controller.heard(speech: true, now: 0)
        controller.heard(speech: false, now: Self.second / 10)
        #expect(controller.mode(now: Self.second / 10) == .lowDelay, "within the hold after voice")
        #expect(controller.mode(now: Self.second / 2) == .robust)
        controller.heard(speech: true, now: Self.second)
        #expect(controller.mode(now: Self.second) == .lowDelay, "the first frame of voice")
    }

    /// The promise: back to low delay within 3 s of the link becoming clean, whatever
    /// the phase of the reports; seeded report phases.
    @Test func backWithinThreeSecondsOfACleanLinkAtAnyReportPhase() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<50 {
            var controller = CodecModeController()
            let phase = UInt64.random(in: 0..<Self.second, using: &generator)
            let cleanAt = 10 * Self.second
            var back: UInt64?
            for report in 0..<20 {
                let time = phase + UInt64(report) * Self.second
                controller.heard(speech: true, now: time)
                // A report counts the second before it: any of it before `cleanAt` lost packets.
                let lossy = time > 5 * Self.second && time < cleanAt + Self.second
                controller.reported(fractionLost: lossy ? 0.05 : 0, jitterMilliseconds: 1, now: time)
                if time > cleanAt, back == nil, controller.mode(now: time) == .lowDelay { back = time }
            }
            #expect(back.map { $0 - cleanAt <= 3 * Self.second } == true, "phase \(phase)")
        }
    }
}
