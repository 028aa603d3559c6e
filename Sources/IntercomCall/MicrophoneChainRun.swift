import Glibc
import IntercomCore
import IntercomDSP

/// The microphone's whole chain run on recordings, as fast as it goes, with no sound card:
/// the echo reference placed by time and by the signals (`EchoAlignment`), the echo canceller
/// and preprocessor (`MicrophoneCleaner`), the voice gate VOX would use, and both encoders.
///
/// The microphone recording and the far end (what the speaker played) start at the same
/// instant, as a sound card's capture and playback do when opened together: frame i of each
/// is stamped i periods in, so the timestamps place the reference as a live call's would,
/// and the signals do the rest. The far end is handed over `speakerQueueMilliseconds` before
/// it is heard, as a live call's playback fills the speaker's buffer ahead: an echo that the
/// signals find ahead of its reference is cancelled from samples not yet heard. What each stage costs is measured in CPU time of this thread,
/// so the figure does not depend on what else the machine is doing.
public struct MicrophoneChainRun {
    /// The figures of one run.
    public struct Report: Sendable {
        /// The microphone after cleaning, as the encoders got it.
        public var cleaned: [Int16] = []
        /// Whether the VOX gate would transmit each 10 ms of the recording (with its pre-roll,
        /// a live call sends it that much later).
        public var transmits: [Bool] = []
        public var audioSeconds = 0.0
        /// CPU seconds spent in each stage, in the order they run.
        public var stageSeconds: [(stage: String, seconds: Double)] = []
        public var echoReferenceResyncs = 0
        /// Re-syncs the timestamps called for while the canceller held, not made.
        public var echoReferenceResyncsRefused = 0
        public var echoDelayCorrections = 0
        /// Moves the delay estimator called for that the canceller's prediction refuted.
        public var echoMovesRefused = 0
        public var echoDelayMilliseconds: Double?
        /// What a talking call would send, frame by frame: the low-delay encoder's frames where
        /// the codec adapts (a clean link's), else the robust one's; and their length.
        public var sentFrames: [[UInt8]] = []
        public var sentFrameSamples = 0
    }

    public let configuration: CallConfiguration
    /// How far ahead of being heard the far end is handed over (a live call's speaker queue).
    public static let speakerQueueMilliseconds = 30

    /// A chain set up as a live call's with `configuration` would be (echo cancelling as it
    /// says, denoise and gain control as it says).
    public init(configuration: CallConfiguration) {
        var configuration = configuration
        configuration.liveInput = true
        self.configuration = configuration
    }

    /// Runs the chain over `microphone`, with `farEnd` as what the speaker played (silence
    /// where it is shorter or missing).
    public func run(microphone: [Int16], farEnd: [Int16]) throws -> Report {
        let period = configuration.period
        let frame = period.samples
        let periodNanoseconds = period.nanoseconds
        var settings = configuration.preprocessor
        settings.voiceActivityDetection = true
        let cleaner = try MicrophoneCleaner(
            frameLength: period, settings: settings,
            echoModel: configuration.echoCancellation ? configuration.echoModel : nil
        )
        var alignment = EchoAlignment(frameLength: period, tailMilliseconds: configuration.echoTailMilliseconds)
        let robust = try OpusEncoder(configuration: configuration.encoder)
        let lowDelay = configuration.adaptsCodec ? try OpusEncoder(configuration: configuration.encoder.lowDelay) : nil
        var gate = VoiceActivityGate.vox
        // The gate decides for the frame the pre-roll line hands out, which carries its number.
        var preroll = PrerollLine(frames: Int(MediaTime.samples(nanoseconds: Int64(gate.prerollNanoseconds))) / frame, frameSamples: frame)
        var gated = [Int16](repeating: 0, count: frame)
        let timers = StageTimers(stages: ["echo alignment", "echo canceller and preprocessor", "robust encoder", "low-delay encoder"])

        var report = Report()
        var reference = [Int16](repeating: 0, count: frame)
        var robustFrame: [Int16] = []
        robustFrame.reserveCapacity(configuration.encoder.frameLength.samples)
        let frames = microphone.count / frame
        var gateOpenPerPeriod = [Bool](repeating: false, count: microphone.count / frame)
        let queuedFrames = MediaTime.samples(milliseconds: Self.speakerQueueMilliseconds, rate: VoiceFormat.sampleRate) / frame
        var playedFrames = 0
        for index in 0..<frames {
            let range = (index * frame)..<((index + 1) * frame)
            let time = 1_000_000_000 + UInt64(index) * periodNanoseconds
            var samples = Array(microphone[range])
            if cleaner.cancelsEcho {
                timers.measure(0) {
                    // The far end's frames up to the speaker queue's length ahead.
                    while playedFrames <= index + queuedFrames {
                        let start = playedFrames * frame
                        let played = (start..<(start + frame)).map { $0 < farEnd.count ? farEnd[$0] : 0 }
                        alignment.played(played, at: 1_000_000_000 + UInt64(playedFrames) * periodNanoseconds)
                        playedFrames += 1
                    }
                    alignment.reference(for: samples, capturedAt: time, into: &reference)
                }
            }
            let speech = try timers.measure(1) {
                try cleaner.clean(&samples, reference: cleaner.cancelsEcho ? reference : nil,
                                  echoDelaySamples: alignment.echoDelaySamples)
            }
            if cleaner.cancelsEcho { timers.measure(0) { alignment.echoPredicted(cleaner.echoPrediction, of: cleaner.echoPredictionMicrophone) } }
            let open = gate.isOpen(speech: speech, now: time, delayNanoseconds: UInt64(preroll.count) * periodNanoseconds)
            for (offset, sample) in samples.enumerated() { gated[offset] = sample }
            let sent = preroll.pass(&gated, tag: index, sending: open, pause: cleaner.voiceFrame.isPause)
            if open { gateOpenPerPeriod[sent] = true }
            report.cleaned += samples
            robustFrame += samples
            if robustFrame.count >= configuration.encoder.frameLength.samples {
                let payload = try timers.measure(2) { try robustFrame.withUnsafeBufferPointer { try robust.encode($0) } }
                if lowDelay == nil { report.sentFrames.append(Array(payload)) }
                robustFrame.removeAll(keepingCapacity: true)
            }
            if let lowDelay {
                let payload = try timers.measure(3) { try samples.withUnsafeBufferPointer { try lowDelay.encode($0) } }
                report.sentFrames.append(Array(payload))
            }
        }
        // One decision per 10 ms whatever the period: a 5 ms period's pair is open if either
        // was, a 20 ms period's decision stands for both of its halves.
        let decisionSamples = MediaTime.samples(milliseconds: 10, rate: VoiceFormat.sampleRate)
        report.transmits = (0..<(frames * frame / decisionSamples)).map { decision in
            let periods = (decision * decisionSamples / frame)...(((decision + 1) * decisionSamples - 1) / frame)
            return gateOpenPerPeriod[periods].contains(true)
        }
        report.audioSeconds = Double(frames * frame) / Double(VoiceFormat.sampleRate)
        report.sentFrameSamples = lowDelay == nil ? configuration.encoder.frameLength.samples : frame
        report.stageSeconds = timers.totals.filter { $0.stage != "low-delay encoder" || lowDelay != nil }
            .filter { $0.stage != "echo alignment" || cleaner.cancelsEcho }
        report.echoReferenceResyncs = alignment.resyncs
        report.echoReferenceResyncsRefused = alignment.refusedResyncs
        report.echoDelayCorrections = alignment.corrections
        report.echoMovesRefused = alignment.refusedEstimates
        report.echoDelayMilliseconds = alignment.echoDelaySamples.map { MediaTime.milliseconds(samples: Double($0)) }
        return report
    }
}

/// CPU time of this thread spent in each stage (a class, so that the stages of a receive
/// stream, called from inside the mixer, add to the same figures).
final class StageTimers {
    private var seconds: [Double]
    private let stages: [String]

    init(stages: [String]) {
        self.stages = stages
        seconds = [Double](repeating: 0, count: stages.count)
    }

    var totals: [(stage: String, seconds: Double)] { Array(zip(stages, seconds)).map { (stage: $0.0, seconds: $0.1) } }

    func measure<Result>(_ stage: Int, _ body: () throws -> Result) rethrows -> Result {
        let start = Self.threadCPUSeconds()
        defer { seconds[stage] += Self.threadCPUSeconds() - start }
        return try body()
    }

    /// Moves what `inner` spent out of `outer`, where `outer` was measured around it.
    func takeOut(_ inner: Int, from outer: Int) {
        seconds[outer] -= seconds[inner]
    }

    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
