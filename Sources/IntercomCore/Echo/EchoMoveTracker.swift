import CSignalKernels

/// Finds, at full rate and within a tenth of a second, that the echo moved against the
/// reference the canceller learned it on, and by how many samples.
///
/// SpeexDSP's canceller (MDF) learns the echo path in seconds and, once the echo moves by as
/// little as a few samples, unlearns it within a few hundred milliseconds: fed an echo moved
/// by 6.6 ms for 0.4 s, its filter was spoiled and cancelled 0-10 dB for the next second,
/// while a reference put back within 0.1 s of the move cost almost nothing. Putting it back by
/// the decimated `EchoDelayEstimator`'s whole taps (half a millisecond) is not enough either:
/// 5 samples off, the filter has to learn again. So the canceller's own prediction of the
/// echo (its input less its output) is kept beside the microphone: while the canceller
/// holds, the microphone is that prediction; when the echo moves by `l` samples, the
/// microphone becomes the prediction `l` samples later, well before the filter has adapted.
///
/// Every frame the unshifted prediction is compared with the microphone. Once it leaves much
/// of it (the canceller cancels under 10 dB) after having cancelled well, and for up to 150 ms
/// of frames with echo, every lag within `spanSamples` (2 ms) either way is compared too, and
/// every second lag within `wideSpanSamples` (20 ms), whose best is made exact by `bestLag`. A
/// move is reported when a shifted prediction leaves under an eighth of what the unshifted one
/// leaves, for `confirmFrames` frames in a row. Near-end speech is left over by every lag
/// alike, so double talk moves nothing; nor does a changed room, which no shift explains.
/// A true move is explained by the shifted prediction at once, so the search is short: for
/// half a second, a laptop's lid moved (its direct sound 7 samples later, its reflections
/// where they were) was taken for a move about 0.3 s after the change, once the canceller had
/// half learned the new path, and following it moved every reflection too: the echo came back
/// in 1.0-1.5 s rather than 0.5 s in 4 of 12 live calls of the acoustic lab, 0 of 12 since;
/// with the canceller at 16 kHz it was taken again, at once (2 of 3 calls); since a nearby
/// move must also leave little of the microphone (`nearbyMoveShareFloor`), in 1 of 7, 0.3 s
/// after the change, once the canceller had partly learned the new path (what it then left
/// is the `heldShare` the rule allows four times of).
/// The decimated estimator's calls for a move are judged by the same prediction (`judge`):
/// refused where the canceller still cancels or no shift explains the microphone, else made
/// exact. Allocates nothing after
/// `init`, for the capture thread; the comparisons run in C (`CSignalKernels`).
public struct EchoMoveTracker: Sendable {
    public let frameSamples: Int
    /// The largest move found frame by frame, either way.
    public let spanSamples: Int
    /// How much of the recent past `bestLag` looks at.
    public let windowSamples: Int
    /// How far `bestLag` may look from the estimate it is given, either way.
    public let refineSamples: Int
    /// The largest move found while the canceller fails, either way.
    public let wideSpanSamples: Int
    private let confirmFrames: Int
    /// How long a judgement of the canceller holds for `cancellerHolds`: a tenth of a second.
    private let recentFrames: Int
    /// The newest `capacity` samples of the microphone and of the prediction, each ring held
    /// twice over (index i and i + capacity) so that any span of it is one contiguous run.
    private let capacity: Int
    private var microphone: [Float]
    private var prediction: [Float]
    /// Ring index of the next sample to write.
    private var next = 0
    /// Samples written since the last restart.
    private var filled = 0
    /// Smoothed, per frame: the microphone's energy and what each lag leaves of it (index
    /// `spanSamples` is the unshifted prediction).
    private var microphoneEnergy: Float = 0
    private var residualEnergy: [Float]
    private var framesSeen = 0
    /// Smoothed over every frame judged: what the unshifted prediction leaves of the
    /// microphone, and the microphone's energy beside it.
    private var unshiftedEnergy: Float = 0
    private var judgedEnergy: Float = 0
    private var judgedFrames = 0
    /// Frames observed since the last one judged.
    private var framesSinceJudged = 0
    /// Frames judged since the canceller last cancelled well (nil: not since the last restart).
    private var framesSinceCancelling: Int?
    /// What the unshifted prediction left of the microphone (a share of its energy) the last
    /// time the canceller cancelled well (`nearbyMoveShare`).
    private var heldShare: Float = 0
    /// How long after the canceller stopped cancelling well a move is still looked for: a
    /// move spoils a canceller that worked; one that never did has nothing to put back.
    private let searchFrames: Int
    private var candidate = 0
    private var candidateFrames = 0
    /// The same over `wideSpanSamples`, every `wideLagStep`-th lag, measured only while the
    /// unshifted prediction fails (a move, double talk, a changed room): comparing that many
    /// lags every frame would cost more than the canceller.
    private var wideMicrophoneEnergy: Float = 0
    private var wideResidualEnergy: [Float]
    private var wideFramesSeen = 0
    private var wideCandidate = 0
    private var wideCandidateFrames = 0

    /// A frame's share of the smoothed energies: about four frames' memory.
    private static let smoothing: Float = 0.5
    /// The unshifted prediction leaves more than this share of the microphone: the canceller
    /// cancels under 10 dB.
    private static let failingShare: Float = 0.1
    /// A shifted lag leaves less than this share of what the unshifted one leaves (9 dB).
    private static let betterShare: Float = 1.0 / 8
    /// The same for a lag of the wide comparison, before `bestLag` makes it exact (6 dB).
    private static let wideCandidateShare: Float = 1.0 / 4
    /// A nearby lag must also leave no more of the microphone than 5 % (−13 dB), or than four
    /// times what the canceller left before it failed, whichever is more: a move is explained
    /// by the shifted prediction about as well as the canceller explained the echo before it.
    /// A laptop's lid that moved (the acoustic lab's: the direct sound 7 samples later, the
    /// reflections changed) is explained by a 7-sample shift 9 dB better than unshifted once
    /// the prediction is the 16 kHz canceller's (`SpeechBand`), but the shift still leaves a
    /// third of white noise's energy: a changed path, which the canceller relearns in 0.5 s
    /// from where it is, against 1-2.75 s after following the direct sound. (The wide
    /// comparison is left without it: its lags, two samples apart, leave more of a true move.)
    private static let heldAllowance: Float = 4
    private static let nearbyMoveShareFloor: Float = 0.05
    /// Mean square (16-bit units) below which a microphone frame carries too little echo to judge.
    private static let quietEnergy: Float = 100 * 100
    /// The canceller's prediction must hold at least this share of the microphone's energy
    /// (-20 dB) for a frame to be judged: without an echo there is no move to find.
    private static let predictedShare: Float = 0.01
    private static let wideLagStep = 2

    public init(
        frameSamples: Int, sampleRate: Int = VoiceFormat.sampleRate, spanMilliseconds: Int = 2,
        windowMilliseconds: Int = 40, wideSpanMilliseconds: Int = 20, confirmMilliseconds: Int = 15,
        searchMilliseconds: Int = 150
    ) {
        self.frameSamples = frameSamples
        spanSamples = MediaTime.samples(milliseconds: spanMilliseconds, rate: sampleRate)
        windowSamples = MediaTime.samples(milliseconds: windowMilliseconds, rate: sampleRate)
        refineSamples = MediaTime.samples(milliseconds: 1, rate: sampleRate)
        confirmFrames = max(1, MediaTime.samples(milliseconds: confirmMilliseconds, rate: sampleRate) / max(1, frameSamples))
        searchFrames = MediaTime.samples(milliseconds: searchMilliseconds, rate: sampleRate) / max(1, frameSamples)
        recentFrames = max(1, MediaTime.samples(milliseconds: 100, rate: sampleRate) / max(1, frameSamples))
        wideSpanSamples = MediaTime.samples(milliseconds: wideSpanMilliseconds, rate: sampleRate)
        let farthest = wideSpanSamples + refineSamples
        capacity = windowSamples + 2 * max(farthest, spanSamples) + frameSamples
        microphone = [Float](repeating: 0, count: 2 * capacity)
        prediction = [Float](repeating: 0, count: 2 * capacity)
        residualEnergy = [Float](repeating: 0, count: 2 * spanSamples + 1)
        wideResidualEnergy = [Float](repeating: 0, count: 2 * (wideSpanSamples / Self.wideLagStep) + 1)
    }

    /// Takes one frame of the microphone and the canceller's prediction of its echo; returns
    /// the lag by which the echo moved (later when positive) once a move is confirmed.
    public mutating func observe(microphone frame: [Int16], prediction predicted: [Int16]) -> Int? {
        let count = min(frame.count, predicted.count, capacity)
        for index in 0..<count {
            microphone[next] = Float(frame[index])
            microphone[next + capacity] = Float(frame[index])
            prediction[next] = Float(predicted[index])
            prediction[next + capacity] = Float(predicted[index])
            next = next == capacity - 1 ? 0 : next + 1
        }
        filled += count
        guard count > 0 else { return nil }
        framesSinceJudged += 1
        if let move = observeNearby(count: count) ?? observeWide(count: count) {
            restart()
            return move
        }
        return nil
    }

    /// Whether the canceller cancels well, every frame; while it has stopped, for up to
    /// `searchFrames`, every lag within `spanSamples`.
    private mutating func observeNearby(count: Int) -> Int? {
        guard filled >= count + 2 * spanSamples else { return nil }
        // The frame judged is the microphone `spanSamples` back, so that the prediction is
        // there on both sides of it.
        let start = position(back: spanSamples + count)
        guard let energy = judgeable(count: count, from: start) else {
            candidateFrames = 0
            return nil
        }
        judgedEnergy += Self.smoothing * (energy - judgedEnergy)
        unshiftedEnergy += Self.smoothing * (residual(samples: count, from: start, lag: 0) - unshiftedEnergy)
        judgedFrames += 1
        framesSinceJudged = 0
        guard judgedFrames >= 4 else { return nil }
        if unshiftedEnergy < Self.failingShare * judgedEnergy {
            framesSinceCancelling = 0
            heldShare = unshiftedEnergy / judgedEnergy
            if framesSeen > 0 { forgetSearch() }
            return nil
        }
        guard let since = framesSinceCancelling, since < searchFrames else {
            if framesSeen > 0 { forgetSearch() }
            return nil
        }
        framesSinceCancelling = since + 1
        microphoneEnergy += Self.smoothing * (energy - microphoneEnergy)
        Self.smoothResiduals(
            &residualEnergy, microphone: microphone, prediction: prediction, capacity: capacity,
            count: count, from: start, firstLag: -spanSamples, lagStep: 1
        )
        framesSeen += 1
        // A few frames before the smoothed energies mean anything.
        guard framesSeen >= 4 else { return nil }
        let best = Self.lowest(residualEnergy)
        // A best lag at the edge may be one beyond it: the wide comparison's to find.
        guard best != 0, best != residualEnergy.count - 1 else {
            candidateFrames = 0
            return nil
        }
        return Self.confirm(
            lag: best - spanSamples, residual: residualEnergy[best], unshifted: residualEnergy[spanSamples],
            microphone: microphoneEnergy, candidate: &candidate, frames: &candidateFrames, needed: confirmFrames,
            largestShare: max(Self.heldAllowance * heldShare, Self.nearbyMoveShareFloor)
        )
    }

    /// Every `wideLagStep`-th lag within `wideSpanSamples` while the unshifted prediction
    /// fails, the move then made exact by `bestLag`.
    private mutating func observeWide(count: Int) -> Int? {
        // Only while the nearby comparison searches, and once it has seen a few frames.
        guard framesSeen >= 4, filled >= count + 2 * wideSpanSamples else {
            if wideFramesSeen > 0 { forgetWide() }
            return nil
        }
        let start = position(back: wideSpanSamples + count)
        guard let energy = judgeable(count: count, from: start) else {
            wideCandidateFrames = 0
            return nil
        }
        wideMicrophoneEnergy += Self.smoothing * (energy - wideMicrophoneEnergy)
        let middle = wideSpanSamples / Self.wideLagStep
        Self.smoothResiduals(
            &wideResidualEnergy, microphone: microphone, prediction: prediction, capacity: capacity,
            count: count, from: start, firstLag: -middle * Self.wideLagStep, lagStep: Self.wideLagStep
        )
        wideFramesSeen += 1
        guard wideFramesSeen >= 4 else { return nil }
        let best = Self.lowest(wideResidualEnergy)
        let lag = (best - middle) * Self.wideLagStep
        // Moves within `spanSamples` are the nearby comparison's, which sees every lag. The
        // lags compared here are `wideLagStep` apart, and a sample off leaves a good part of
        // the microphone's upper band: a candidate needs to explain it by less, and the exact
        // lag `bestLag` then finds by as much as a nearby move.
        guard abs(lag) > spanSamples, let confirmed = Self.confirm(
            lag: lag, residual: wideResidualEnergy[best], unshifted: wideResidualEnergy[middle],
            microphone: wideMicrophoneEnergy, candidate: &wideCandidate, frames: &wideCandidateFrames,
            needed: confirmFrames, betterShare: Self.wideCandidateShare
        ) else { return nil }
        guard let exact = bestLag(near: confirmed), exact.residual < Self.betterShare * exact.unshifted else {
            wideCandidateFrames = 0
            return nil
        }
        return exact.lag
    }

    /// The microphone's energy over `count` samples from ring index `start`, when the frame
    /// is loud enough to judge and the canceller predicts an echo in it at all (no far end,
    /// no prediction: nothing to compare, and nothing to spend the comparison on).
    private func judgeable(count: Int, from start: Int) -> Float? {
        let energy = Self.dot(microphone, start, microphone, start, count: count)
        let predicted = Self.dot(prediction, start, prediction, start, count: count)
        guard energy > Self.quietEnergy * Float(count), predicted > Self.predictedShare * energy else { return nil }
        return energy
    }

    /// Smooths into `energies[i]` what the prediction `firstLag + i * lagStep` samples earlier
    /// leaves of the microphone's `count` samples from `start`. Static, with the rings passed
    /// in: a method of the tracker handed one of its own arrays inout made Swift copy the
    /// tracker for the call, and the array then allocated afresh on its first write, on the
    /// capture thread (74 allocations a second in a lab call).
    private static func smoothResiduals(
        _ energies: inout [Float], microphone: [Float], prediction: [Float], capacity: Int,
        count: Int, from start: Int, firstLag: Int, lagStep: Int
    ) {
        microphone.withUnsafeBufferPointer { mic in
            prediction.withUnsafeBufferPointer { predicted in
                energies.withUnsafeMutableBufferPointer { out in
                    intercom_smooth_lag_residuals(
                        mic.baseAddress, predicted.baseAddress, Int32(capacity), Int32(start), Int32(count),
                        Int32(firstLag), Int32(lagStep), Int32(out.count), smoothing, out.baseAddress
                    )
                }
            }
        }
    }

    /// The sum of products of `count` samples of `a` from `aStart` and of `b` from `bStart`
    /// (both rings held twice over, so each run is contiguous).
    private static func dot(_ a: [Float], _ aStart: Int, _ b: [Float], _ bStart: Int, count: Int) -> Float {
        a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in intercom_dot(x.address(at: aStart), y.address(at: bStart), Int32(count)) }
        }
    }

    /// Whether `lag` explains the microphone so much better than the unshifted prediction,
    /// which fails, and leaves at most `largestShare` of it, that the echo moved there; true
    /// once it has for `needed` frames in a row.
    private static func confirm(
        lag: Int, residual: Float, unshifted: Float, microphone: Float, candidate: inout Int, frames: inout Int,
        needed: Int, betterShare: Float = betterShare, largestShare: Float = 1
    ) -> Int? {
        let moved = lag != 0 && unshifted > failingShare * microphone && residual < betterShare * unshifted
            && residual < largestShare * microphone
        guard moved else {
            frames = 0
            return nil
        }
        if frames > 0, abs(lag - candidate) <= wideLagStep {
            frames += 1
        } else {
            candidate = lag
            frames = 1
        }
        return frames >= needed ? lag : nil
    }

    private static func lowest(_ values: [Float]) -> Int {
        var best = values.count / 2
        for index in values.indices where values[index] < values[best] { best = index }
        return best
    }

    private mutating func forgetWide() {
        for index in wideResidualEnergy.indices { wideResidualEnergy[index] = 0 }
        wideMicrophoneEnergy = 0
        wideFramesSeen = 0
        wideCandidateFrames = 0
    }

    /// Whether the canceller, with the reference where it is, cancelled the echo well (10 dB
    /// and more) in the last frames loud enough to judge, up to `recentFrames` ago: then the
    /// echo has not moved, whatever the decimated estimator says. (Its filter can peak a pitch
    /// period off for a moment: in a lab call at load it called for a move of 8.5 ms while
    /// the canceller cancelled 36-41 dB, spoiling a second of cancelling, and back 0.8 s later.)
    public var cancellerHolds: Bool {
        judgedFrames >= 4 && framesSinceJudged <= recentFrames && unshiftedEnergy < Self.failingShare * judgedEnergy
    }

    /// What to make of the decimated estimator's call for a move of `estimate` samples: refused
    /// while the canceller still cancels the echo where it is (`cancellerHolds`), and refused
    /// when the canceller cancelled since the reference last moved but no shift of its
    /// prediction near the estimate explains the microphone (near-end speech, a changed room:
    /// no move). Otherwise the move, exact where the prediction says where (`bestLag`).
    /// When `placing` the echo (the estimator's first delay, put early in the canceller's
    /// tail), nothing is refused: the prediction only makes the move exact.
    public func judge(estimate: Int, placing: Bool = false) -> EstimateJudgement {
        if placing { return .follow(bestLag(near: estimate)?.lag ?? estimate) }
        guard !cancellerHolds else { return .refuse }
        guard let best = bestLag(near: estimate) else { return .follow(estimate) }
        if best.residual < Self.betterShare * best.unshifted { return .follow(best.lag) }
        // A canceller that never cancelled predicts nothing to go by: the estimate stands.
        return framesSinceCancelling == nil ? .follow(best.lag) : .refuse
    }

    public enum EstimateJudgement: Equatable, Sendable {
        /// The echo did not move: the estimate is off.
        case refuse
        /// Move the reference by this many samples (later when positive).
        case follow(Int)

    }

    /// The lag within `refineSamples` of `estimate` (samples; later when positive) that best
    /// explains the last `windowSamples` of the microphone by the prediction, with what it and
    /// the unshifted prediction leave of them; nil when too little of either is at hand.
    private func bestLag(near estimate: Int) -> (lag: Int, residual: Float, unshifted: Float)? {
        let reach = abs(estimate) + refineSamples
        guard filled >= windowSamples + 2 * reach, 2 * reach + windowSamples <= capacity else { return nil }
        let start = position(back: reach + windowSamples)
        var best = (lag: estimate, residual: Float.infinity)
        for lag in (estimate - refineSamples)...(estimate + refineSamples) {
            let residual = self.residual(samples: windowSamples, from: start, lag: lag)
            if residual < best.residual { best = (lag, residual) }
        }
        return (best.lag, best.residual, residual(samples: windowSamples, from: start, lag: 0))
    }

    /// Forgets the comparison and what the rings hold: the reference moved, so the canceller
    /// predicts on another alignment from now on.
    public mutating func restart() {
        unshiftedEnergy = 0
        judgedEnergy = 0
        judgedFrames = 0
        framesSinceCancelling = nil
        heldShare = 0
        filled = 0
        forgetSearch()
    }

    /// Forgets the search for a move: the canceller cancels again, or it stopped too long ago.
    private mutating func forgetSearch() {
        for index in residualEnergy.indices { residualEnergy[index] = 0 }
        microphoneEnergy = 0
        framesSeen = 0
        candidateFrames = 0
        forgetWide()
    }

    /// What the prediction `lag` samples earlier leaves of the microphone's `samples` from
    /// ring index `start`.
    private func residual(samples: Int, from start: Int, lag: Int) -> Float {
        let predictedStart = wrap(start - lag)
        return Self.dot(microphone, start, microphone, start, count: samples)
            - 2 * Self.dot(microphone, start, prediction, predictedStart, count: samples)
            + Self.dot(prediction, predictedStart, prediction, predictedStart, count: samples)
    }

    private func wrap(_ index: Int) -> Int {
        index < 0 ? index + capacity : index >= capacity ? index - capacity : index
    }

    /// The ring index `samples` before the next write.
    private func position(back samples: Int) -> Int {
        let index = next - samples
        return index < 0 ? index + capacity : index
    }
}
