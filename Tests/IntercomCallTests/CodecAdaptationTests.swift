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
        let payloadBytes: Int
    }

    /// A live microphone's send path (the default settings, echo cancelling on: the codec
    /// adapts) reading the paragraph on its own thread, with blocking sleeps: under a loaded
    /// test run an async test may resume seconds late, and every packet would then be
    /// collected at one moment. Reports go in as the network thread posts them.
    final class CaptureRun {
        let counters = CaptureStatistics()
        private let outbox = RecyclingRing<[UInt8]>(capacity: 2_048) { [] }
        private let linkFeedback = LinkFeedbackChannel()
        private let stop = SharedFlag()
        private let thread: JoinableThread
        private let start = ContinuousClock.now
        private(set) var sent: [Sent] = []

        init() throws {
            var configuration = CallConfiguration()
            configuration.liveInput = true
            #expect(configuration.adaptsCodec && configuration.period.samples == 240)
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            var generator = SystemRandomNumberGenerator()
            let capture = try CapturePipeline(
                source: try WAVFileSource(path: speech.path, frameLength: configuration.period), configuration: configuration,
                stream: OutgoingStream(using: &generator), echoReference: EchoReference(frameLength: configuration.period),
                localTones: SPSCRing(capacity: 4), pageFeed: PageFeed(), outbox: outbox, counters: counters,
                linkFeedback: linkFeedback, wakeNetwork: {}
            )
            let stop = stop
            thread = try JoinableThread(name: "capture") { capture.run(LoopTurns(thread: "capture", stop: stop)) }
        }

        func elapsed() -> Double { (ContinuousClock.now - start).seconds }

        /// A report of the link and the listeners, as the network thread posts it; when it was posted.
        func report(lossPermille: Int, listeners: Int = 1) -> Double {
            linkFeedback.post(LinkFeedback(lossPermille: lossPermille, jitterMicroseconds: 500, listeners: listeners))
            return elapsed()
        }

        func wait(until time: Double) {
            while elapsed() < time {
                collect()
                SystemClock.sleep(untilMonotonic: SystemClock.monotonicNanoseconds() + 20_000_000)
            }
        }

        func finish() {
            stop.value.store(true, ordering: .relaxed)
            thread.join()
            collect()
        }

        private func collect() {
            while let datagram = outbox.pop() {
                if let header = try? RTPPacket.parseHeader(datagram[...]),
                   case let payload = datagram[header.payload], let samples = OpusTableOfContents.samples(of: payload) {
                    sent.append(Sent(at: elapsed(), samples: samples, celt: payload.first! >> 3 >= 16, payloadBytes: payload.count))
                }
                outbox.giveBack(consume datagram)
            }
        }
    }

    @Test func lossSwitchesToTheRobustEncoderAndACleanLinkBringsLowDelayBackWithinThreeSeconds() throws {
        let run = try CaptureRun()
        // Reports once a second, as a receiver sends them; the low-delay encoder may wait up to
        // 1 s for a pause in the paragraph before it takes over.
        run.wait(until: 0.3)
        let firstClean = run.report(lossPermille: 0)
        run.wait(until: 3.0)
        let lossy = run.report(lossPermille: 50)
        run.wait(until: 4.0)
        _ = run.report(lossPermille: 30)
        run.wait(until: 5.0)
        let lastLossy = run.report(lossPermille: 20)
        run.wait(until: 6.0)
        let clean = run.report(lossPermille: 0)
        run.wait(until: 9.0)
        run.finish()
        let sent = run.sent

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
        #expect(run.counters.codecMode.load(ordering: .relaxed) != .fixed)
    }

    /// A stream that five devices hear goes in 10 ms frames at 57 kb/s on a clean link (half
    /// the packets, and bytes for about three copies at the full rate); back with two
    /// listeners, low delay and the full 96 kb/s return at the next report.
    @Test func manyListenersGetTenMillisecondFramesAtASharedBitrate() throws {
        let run = try CaptureRun()
        run.wait(until: 0.3)
        let many = run.report(lossPermille: 0, listeners: 5)
        run.wait(until: 3.5)
        #expect(run.counters.bitrate.load(ordering: .relaxed) == 57_000)
        let few = run.report(lossPermille: 0, listeners: 2)
        run.wait(until: 6.5)
        run.finish()
        #expect(run.counters.bitrate.load(ordering: .relaxed) == 96_000)

        let shared = run.sent.filter { $0.at > many + 0.1 && $0.at < few }
        #expect(shared.count > 100 && shared.allSatisfy { !$0.celt && $0.samples == 480 },
                "\(shared.filter(\.celt).count) CELT packets of \(shared.count) while five devices listened")
        // Opus's VBR keeps near its target over a talkspurt: compare the bytes of audio coded.
        func bitsPerSecond(_ packets: [Sent]) -> Double {
            Double(packets.reduce(0) { $0 + $1.payloadBytes } * 8) / (Double(packets.reduce(0) { $0 + $1.samples }) / 48_000)
        }
        // Low delay may wait up to 1 s for a pause before it takes over.
        let full = run.sent.filter { $0.at > few + 1.2 }
        #expect(full.contains { $0.celt && $0.samples == 240 }, "no low-delay frame back with two listeners")
        let sharedRate = bitsPerSecond(shared.filter { $0.payloadBytes > 2 })
        let fullRate = bitsPerSecond(full.filter { $0.payloadBytes > 2 })
        #expect(sharedRate < 66_000 && fullRate > 80_000, "coded at \(Int(sharedRate)) b/s shared, \(Int(fullRate)) b/s with two listeners")
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
