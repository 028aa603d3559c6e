import IntercomCore
import IntercomSecurity

/// The other half of a live call run on the frames a microphone chain encoded
/// (`MicrophoneChainRun`), as fast as it goes, with no network and no sound card: each frame
/// put in an RTP packet and sealed as an encrypted call seals it (ChaCha20-Poly1305 under a
/// session key, the transport header as associated data), then opened, its header read, and
/// played through a receive stream as the playback thread plays one (jitter buffer, Opus
/// decoder with FEC and concealment, the drift-correcting resampler, the mixer), period by
/// period on a virtual clock: every frame arrives 1 ms after it was captured.
public struct ReceiveChainRun {
    public struct Report: Sendable {
        /// What the speaker would play.
        public var played: [Float] = []
        /// CPU seconds spent in each stage, in the order they run.
        public var stageSeconds: [(stage: String, seconds: Double)] = []
    }

    public let configuration: CallConfiguration

    public init(configuration: CallConfiguration) {
        self.configuration = configuration
    }

    private enum Stage: Int, CaseIterable {
        case sealing, opening, mixing, decoder, driftResampler

        var name: String {
            switch self {
            case .sealing: "RTP packet and sealing"
            case .opening: "opening and RTP header"
            case .mixing: "jitter buffer and mixer"
            case .decoder: "Opus decoder"
            case .driftResampler: "drift resampler"
            }
        }
    }

    /// Plays `frames`, each `frameSamples` long and in capture order.
    public func run(frames: [[UInt8]], frameSamples: Int) -> Report {
        let timers = StageTimers(stages: Stage.allCases.map(\.name))
        let period = configuration.period.samples
        let periodNanoseconds = MediaTime.nanoseconds(frames: period, rate: VoiceFormat.sampleRate)
        let frameNanoseconds = MediaTime.nanoseconds(frames: frameSamples, rate: VoiceFormat.sampleRate)
        let jitter = JitterBufferConfiguration(
            frameLength: configuration.encoder.frameLength, maximumDelay: MediaTime.nanoseconds(configuration.maximumJitterDelay)
        )
        let mixer = StreamMixer(jitterBufferConfiguration: jitter) { _ in
            (
                TimedDecoder(OpusPlayoutDecoder(undecodable: PlaybackCounter()), timers: timers, stage: Stage.decoder.rawValue),
                TimedRateAdjuster(ResamplingRateAdjuster.make(), timers: timers, stage: Stage.driftResampler.rawValue)
            )
        }
        // A session key as a handshake leaves it: fixed, since only its cost matters here.
        let key = [UInt8](repeating: 0x5A, count: Sodium.aeadKeyBytes)
        let ssrc: UInt32 = 0x1C0F_FEE5
        var rtp: [UInt8] = []
        var datagram: [UInt8] = []
        var opened: [UInt8] = []
        var output = [Float](repeating: 0, count: period)
        var report = Report()
        let start: UInt64 = 1_000_000_000
        let lastArrival = start + UInt64(frames.count) * frameNanoseconds + 1_000_000
        var next = 0
        var now = start
        while now <= lastArrival + 200_000_000 {
            while next < frames.count, start + UInt64(next + 1) * frameNanoseconds + 1_000_000 <= now {
                let counter = UInt64(next)
                timers.measure(Stage.sealing.rawValue) {
                    RTPPacket.serialize(
                        marker: next == 0, payloadType: configuration.payloadType, sequenceNumber: UInt16(truncatingIfNeeded: next),
                        timestamp: UInt32(truncatingIfNeeded: next * frameSamples), ssrc: ssrc, payload: frames[next][...], into: &rtp
                    )
                    datagram.removeAll(keepingCapacity: true)
                    datagram.append(contentsOf: repeatElement(0, count: SecureDatagram.transportHeaderLength))
                    Sodium.seal(key: key, counter: counter, plaintext: rtp, appendingTo: &datagram)
                }
                let packet = timers.measure(Stage.opening.rawValue) { () -> (header: RTPHeader, payload: [UInt8])? in
                    guard Sodium.open(
                        key: key, counter: counter, datagram: datagram[...], associatedCount: SecureDatagram.transportHeaderLength, into: &opened
                    ), let header = try? RTPPacket.parseHeader(opened[...]) else { return nil }
                    return (header, Array(opened[header.payload]))
                }
                if let packet {
                    timers.measure(Stage.mixing.rawValue) {
                        mixer.insert(
                            ssrc: packet.header.ssrc, sequenceNumber: packet.header.sequenceNumber, timestamp: packet.header.timestamp,
                            marker: packet.header.marker, payload: packet.payload, arrivalTime: now
                        )
                    }
                }
                next += 1
            }
            timers.measure(Stage.mixing.rawValue) { output.withUnsafeMutableBufferPointer { mixer.pull(into: $0, now: now) } }
            report.played += output
            now += periodNanoseconds
        }
        // The mixer's time held the decoder's and the resampler's.
        timers.takeOut(Stage.decoder.rawValue, from: Stage.mixing.rawValue)
        timers.takeOut(Stage.driftResampler.rawValue, from: Stage.mixing.rawValue)
        report.stageSeconds = timers.totals
        return report
    }
}

/// A stage of a receive stream whose CPU time is counted on its own.
private class TimedStage<Inner> {
    let inner: Inner
    private let timers: StageTimers
    private let stage: Int

    init(_ inner: Inner, timers: StageTimers, stage: Int) {
        self.inner = inner
        self.timers = timers
        self.stage = stage
    }

    func measure<Result>(_ body: () -> Result) -> Result { timers.measure(stage, body) }
}

private final class TimedDecoder: TimedStage<any FrameDecoder>, FrameDecoder {
    func render(_ decision: consuming PlayoutDecision, samples: Int, into output: inout [Float]) {
        let decision = decision
        measure { inner.render(decision, samples: samples, into: &output) }
    }

    func discard(_ payload: consuming [UInt8]) {
        inner.discard(payload)
    }
}

private final class TimedRateAdjuster: TimedStage<any RateAdjuster>, RateAdjuster {
    func adjust(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, ratio: Double) -> Int {
        measure { inner.adjust(input, into: output, ratio: ratio) }
    }
}
