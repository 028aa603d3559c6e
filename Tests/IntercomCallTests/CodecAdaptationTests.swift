import IntercomCore
import IntercomIO
import Synchronization
import Testing
import TestSupport
@testable import IntercomCall

/// The send path's adaptive codec against receiver reports, as the network thread hands them
/// over: speech goes as 5 ms low-delay CELT on a clean link, as 10 ms SILK or hybrid frames
/// (with FEC) while reports show loss, and as CELT again after the first clean report.
@Suite struct CodecAdaptationTests {
    struct Sent {
        let at: Double
        let samples: Int
        let celt: Bool
    }

    /// Runs on its own thread with blocking sleeps: under a loaded test run an async test may
    /// resume seconds late, and every packet would then be collected at one moment.
    @Test func lossSwitchesToTheRobustEncoderAndACleanLinkBringsLowDelayBackWithinThreeSeconds() throws {
        // A live microphone with the default settings (echo cancelling on): the codec adapts.
        var configuration = CallConfiguration()
        configuration.liveInput = true
        #expect(configuration.adaptsCodec && configuration.period.samples == 240)
        let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph)
        let outbox = RecyclingRing<[UInt8]>(capacity: 2_048) { [] }
        let counters = CaptureStatistics()
        let linkFeedback = LinkFeedbackChannel()
        var generator = SystemRandomNumberGenerator()
        let capture = try CapturePipeline(
            source: try WAVFileSource(path: speech.path, frameLength: configuration.period), configuration: configuration,
            stream: OutgoingStream(using: &generator), echoReference: EchoReference(frameLength: configuration.period),
            localTones: SPSCRing(capacity: 4), pageFeed: PageFeed(), outbox: outbox, counters: counters,
            linkFeedback: linkFeedback, wakeNetwork: {}
        )
        let stop = SharedFlag()
        let thread = try JoinableThread(name: "capture") { capture.run(LoopTurns(thread: "capture", stop: stop)) }
        let start = ContinuousClock.now
        func elapsed() -> Double { (ContinuousClock.now - start).seconds }
        var sent: [Sent] = []
        func collect() {
            while let datagram = outbox.pop() {
                if let header = try? RTPPacket.parseHeader(datagram[...]),
                   case let payload = datagram[header.payload], let samples = OpusTableOfContents.samples(of: payload) {
                    sent.append(Sent(at: elapsed(), samples: samples, celt: payload.first! >> 3 >= 16))
                }
                outbox.giveBack(consume datagram)
            }
        }
        /// A receiver's report, as the network thread posts it.
        func report(lossPermille: Int) -> Double {
            linkFeedback.post(LinkFeedback(lossPermille: lossPermille, jitterMicroseconds: 500))
            return elapsed()
        }
        func wait(until time: Double) {
            while elapsed() < time {
                collect()
                SystemClock.sleep(untilMonotonic: SystemClock.monotonicNanoseconds() + 20_000_000)
            }
        }

        // Reports once a second, as a receiver sends them; the low-delay encoder may wait up to
        // 1 s for a pause in the paragraph before it takes over.
        wait(until: 0.3)
        let firstClean = report(lossPermille: 0)
        wait(until: 3.0)
        let lossy = report(lossPermille: 50)
        wait(until: 4.0)
        _ = report(lossPermille: 30)
        wait(until: 5.0)
        let lastLossy = report(lossPermille: 20)
        wait(until: 6.0)
        let clean = report(lossPermille: 0)
        wait(until: 9.0)
        stop.value.store(true, ordering: .relaxed)
        thread.join()
        collect()

        // While the link is clean and the paragraph is spoken: low-delay frames.
        let early = sent.filter { $0.at > firstClean + 0.1 && $0.at < lossy }
        #expect(early.contains { $0.celt && $0.samples == 240 }, "\(early.count) packets before the loss, none 5 ms CELT")
        // From the first lossy report until the link is clean again: 10 ms SILK or hybrid only.
        let robust = sent.filter { $0.at > lossy + 0.1 && $0.at < clean }
        #expect(!robust.isEmpty)
        #expect(robust.allSatisfy { !$0.celt && $0.samples == 480 }, "\(robust.filter(\.celt).count) CELT packets while loss was reported")
        // Back to low delay at the first clean report, within 3 s of the last lossy one.
        let back = sent.first { $0.at > clean && $0.celt }
        let backAt = try #require(back, "no low-delay frame after the link became clean").at
        #expect(backAt - lastLossy < 3, "low delay back \(backAt - lastLossy) s after the last lossy report")
        #expect(counters.codecMode.load(ordering: .relaxed) != .fixed)
    }

    /// Sound cards run 5 ms periods whatever the loops' period: with the adaptive codec (5 ms
    /// loop periods, with or without echo cancelling) and with the frame fixed at 10 or 20 ms.
    @Test(arguments: [(true, nil), (false, nil), (true, 20), (false, 10)] as [(Bool, Int?)])
    func soundCardsRunFiveMillisecondPeriods(echoCancellation: Bool, frameMilliseconds: Int?) {
        var configuration = CallConfiguration()
        configuration.liveInput = true
        configuration.echoCancellation = echoCancellation
        if let frameMilliseconds {
            configuration.adaptiveCodec = false
            configuration.encoder.frameMilliseconds = frameMilliseconds
        }
        #expect(configuration.devicePeriod == .milliseconds(5))
        #expect(configuration.period.samples == frameMilliseconds.map { $0 * 48 } ?? 240)
    }

    /// The Pi profile's longest period, 10 ms, is asked for where the loops' period holds it
    /// whole (its own 20 ms frames, or 10 ms given with it); 5 ms frames given with it, or the
    /// adaptive codec, keep 5 ms periods.
    @Test(arguments: [(20, 10), (10, 10), (5, 5), (nil, 5)] as [(Int?, Int)])
    func thePiProfilesSoundCardsRunTenMillisecondPeriodsWhereTheLoopsAllow(frameMilliseconds: Int?, expected: Int) {
        var configuration = CallConfiguration()
        configuration.liveInput = true
        configuration.longestDevicePeriod = AudioProfile.pi.longestDevicePeriod
        if let frameMilliseconds {
            configuration.adaptiveCodec = false
            configuration.encoder.frameMilliseconds = frameMilliseconds
        }
        #expect(configuration.devicePeriod == .milliseconds(expected))
    }
}
