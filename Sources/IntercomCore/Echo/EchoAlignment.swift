/// Keeps the echo where the canceller learned it: the devices' timestamps place the reference
/// (`EchoReferenceTimeline`), and the signals (`EchoDelayEstimator`) say where the echo
/// really is and have the last word.
///
/// Once the signals have found the echo's delay behind the reference, that delay is kept:
/// when the echo moves (a speaker underrun, a capture overrun, a device restart), the read
/// position moves with it, so the canceller's filter still fits; when only the timestamps
/// move (a loaded machine), nothing moves. A first delay outside `window` (too close to
/// leading the reference, or so late that the room's reverberation no longer fits the
/// canceller's tail) is moved to `targetSamples`. The timestamps move the reference only
/// further than the signals can see (a device restart), judged from where the moves left it,
/// and never while the canceller still cancels the echo where it is.
///
/// Moves are put right to the sample and fast, since the canceller unlearns a moved echo
/// within a few hundred milliseconds (`EchoMoveTracker`): the canceller's prediction of each
/// frame's echo (`echoPredicted`) finds a move of up to 20 ms within a few frames, and one
/// the decimated estimator calls for is checked against the same prediction: refused while
/// the canceller still cancels the echo where it is (the estimator's filter can peak a pitch
/// period off), else made exact. Allocates nothing after `init`.
public struct EchoAlignment: Sendable {
    public private(set) var timeline: EchoReferenceTimeline
    private var estimator: EchoDelayEstimator
    private var moveTracker: EchoMoveTracker
    /// The microphone frame of the last `reference(for:)`, for `echoPredicted`.
    private var microphone: [Int16]
    /// Delays of the echo behind the reference that are kept as they are found.
    public let window: ClosedRange<Int>
    /// Where a delay found outside `window` is moved to: early in the tail, with room for the
    /// echo to come a few milliseconds earlier before the canceller loses it.
    public let targetSamples: Int
    /// How far the echo may move before the reference follows it: 2 ms, four taps of the
    /// decimated filter, whose peak in a reverberant room can sit a tap or two either side
    /// from one estimate to the next (each move makes the canceller adapt again).
    public let toleranceSamples: Int
    /// The echo's delay behind the reference, once the signals have found it.
    public private(set) var echoDelaySamples: Int?
    /// Times the reference moved to follow the echo (not counted in `resyncs`).
    public private(set) var corrections = 0
    /// The latest of them.
    public private(set) var lastMove: EchoMove?
    /// Moves the decimated estimator called for that the canceller's prediction refuted
    /// (`EchoMoveTracker.judge`), not made.
    public private(set) var refusedEstimates = 0
    /// The capture time of the microphone frame of the last `reference(for:)`.
    private var captureTime: UInt64 = 0

    /// Alignment for frames of `frameLength` and a canceller that models `tailMilliseconds`.
    public init(frameLength: FrameLength, tailMilliseconds: Int, sampleRate: Int = VoiceFormat.sampleRate) {
        let frameSamples = frameLength.samples(atRate: sampleRate)
        timeline = EchoReferenceTimeline(frameSamples: frameSamples, sampleRate: sampleRate)
        estimator = EchoDelayEstimator(sampleRate: sampleRate, frameSamples: frameSamples)
        moveTracker = EchoMoveTracker(frameSamples: frameSamples, sampleRate: sampleRate)
        microphone = [Int16](repeating: 0, count: frameSamples)
        let earliest = MediaTime.samples(milliseconds: 2, rate: sampleRate)
        // The direct path early in the tail leaves the rest of it for the room's reverberation.
        let latest = max(earliest, MediaTime.samples(milliseconds: tailMilliseconds, rate: sampleRate) / 2)
        window = earliest...latest
        targetSamples = MediaTime.samples(milliseconds: 10, rate: sampleRate)
        toleranceSamples = 4 * estimator.decimation
    }

    /// Times the timestamps moved the reference (`EchoReferenceTimeline.resyncs`).
    public var resyncs: Int { timeline.resyncs }
    /// Times they would have while the canceller still cancelled the echo where it was.
    public var refusedResyncs: Int { timeline.refusedResyncs }

    /// Records a frame the speaker plays from `playTime` (monotonic nanoseconds) on.
    public mutating func played(_ frame: [Int16], at playTime: UInt64) {
        timeline.played(frame, at: playTime)
    }

    /// The reference for `microphone`, whose first sample was captured at `captureTime`, in
    /// `output` (replacing what it held). A move the signals call for applies from the next frame.
    public mutating func reference(for microphone: [Int16], capturedAt captureTime: UInt64, into output: inout [Int16]) {
        for index in self.microphone.indices { self.microphone[index] = index < microphone.count ? microphone[index] : 0 }
        self.captureTime = captureTime
        let resyncsBefore = timeline.resyncs
        // While the canceller cancels the echo where the reference is, the timestamps, however
        // far off, have not seen the echo move: a loaded machine reports them late or early for
        // seconds (or a device reports delays shorter than they are, once a move placed the
        // echo), and a re-sync there would throw away what the canceller learned.
        timeline.reference(capturedAt: captureTime, into: &output, echoStaysPut: moveTracker.cancellerHolds)
        if timeline.resyncs != resyncsBefore { moveTracker.restart() }
        if timeline.resyncs != resyncsBefore, echoDelaySamples != nil {
            // The timestamps moved the reference further than the signals could see: what
            // the filter learned no longer applies, but the delay the canceller learned is
            // kept. After a device restart the echo is found there again; when the machine
            // only stalled and the timestamps were wrong, the echo is found that far off and
            // the reference goes back. (Before the echo is found the filter learns on through
            // the timestamps' jumps: under load they can come every second, and starting
            // afresh at each kept it from ever finding the echo.)
            estimator.restart()
            return
        }
        guard let delay = estimator.observe(reference: output, microphone: microphone) else { return }
        // The first delay found places the echo in the canceller's tail: not a move of the
        // echo, and the canceller's prediction (on the echo where it came) has no say in it.
        let placing = echoDelaySamples == nil
        let kept = echoDelaySamples ?? (window.contains(delay) ? delay : targetSamples)
        echoDelaySamples = kept
        timeline.isLockedBySignals = true
        guard abs(delay - kept) > toleranceSamples else { return }
        // The estimator's taps are half a millisecond apart, and its filter can peak a pitch
        // period off for a moment; the canceller's own prediction says whether the echo moved,
        // and exactly where to.
        guard case .follow(let echoMove) = moveTracker.judge(estimate: delay - kept, placing: placing) else {
            // The echo is where it was kept: the estimator learns it there again.
            estimator.referenceMoved(bySamples: kept - delay)
            refusedEstimates += 1
            return
        }
        // A later read position gives the reference newer samples: their echo comes later
        // behind them.
        timeline.moveRead(bySamples: -echoMove)
        corrections += 1
        lastMove = EchoMove(capturedAt: captureTime, samples: echoMove, finder: .delayEstimator)
        estimator.referenceMoved(bySamples: kept - delay)
        moveTracker.restart()
    }

    /// Takes the canceller's prediction of the echo in the microphone frame last given to
    /// `reference(for:)` (its input less its output), or in `heard` when the prediction comes
    /// later than that frame (a canceller behind resamplers: `heard` is the microphone delayed
    /// as much). When the echo has moved by a little against the reference, the reference
    /// moves with it from the next frame.
    public mutating func echoPredicted(_ prediction: [Int16], of heard: [Int16]? = nil) {
        guard let move = moveTracker.observe(microphone: heard ?? microphone, prediction: prediction) else { return }
        timeline.moveRead(bySamples: -move)
        corrections += 1
        lastMove = EchoMove(capturedAt: captureTime, samples: move, finder: .cancellerPrediction)
        // The echo is back where the estimator learned it too.
        estimator.echoReturned()
    }
}

/// A move of the reference to follow the echo, for the figures that explain a canceller's bad
/// moment: when, how far, and what found it.
public struct EchoMove: Sendable, Equatable {
    public enum Finder: Int, Sendable, Codable, CaseIterable {
        /// The decimated `EchoDelayEstimator` (a move of more than 2 ms, made exact by the
        /// canceller's prediction where it could).
        case delayEstimator
        /// The canceller's own prediction (`EchoMoveTracker`).
        case cancellerPrediction
    }

    /// Monotonic nanoseconds of the first sample of the microphone frame that found it.
    public var capturedAt: UInt64
    /// How far the echo moved behind the reference: later when positive.
    public var samples: Int
    public var finder: Finder

    public init(capturedAt: UInt64, samples: Int, finder: Finder) {
        self.capturedAt = capturedAt
        self.samples = samples
        self.finder = finder
    }
}
