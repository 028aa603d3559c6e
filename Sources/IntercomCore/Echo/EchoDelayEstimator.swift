import CSignalKernels

/// Finds, from the signals themselves, how long after the echo canceller's reference its
/// echo reaches the microphone.
///
/// The devices' timestamps say where the echo should be, but under load they wander by
/// several milliseconds for a while and come back, while the samples themselves stay where
/// they were; and when the echo really moves (an underrun, a device that skipped), only the
/// signals say by how much. As WebRTC's canceller does, a matched filter (NLMS) on decimated
/// signals predicts the microphone from the reference over a range of delays; its strongest
/// tap is the direct path's delay. Reverberation spreads the filter's energy but leaves the
/// direct path the largest tap; near-end speech and noise slow it down but do not move its
/// peak.
///
/// A long filter unlearns a path slowly (seconds), so a move is also found another way: the
/// path learned while the estimate was stable is kept aside, and its prediction, shifted by
/// up to `shiftMilliseconds` either way, is compared with the microphone. When the unshifted
/// prediction no longer explains the microphone and a shifted one explains it well, the echo
/// moved by that shift, and the filter takes the learned path moved by it.
///
/// An estimate is given only when it can be trusted: the filter's peak stands well above its
/// other taps, the filter predicts a good part of the microphone's energy (so there is an echo
/// at all, and the near end is not talking over it), and the peak has stayed at one delay for
/// `stableMilliseconds` of far-end signal. A new delay replaces an established one only once
/// the filter has unlearned the old one (its tap fell below half the new peak): voiced speech
/// repeats itself every pitch period, and for a moment a disturbed filter can peak one period
/// off the echo, which moving the reference there would turn into a real misalignment.
/// Allocates nothing after `init`, for the capture thread.
public struct EchoDelayEstimator: Sendable {
    /// Samples of the full rate per decimated sample (48 kHz to 2 kHz): speech below 1 kHz
    /// carries most of the energy, and half a millisecond is finer than the canceller needs.
    public let decimation: Int
    /// Taps before the reference's own position: an echo that comes early is found too.
    public let leadTaps: Int
    public let taps: Int
    /// The largest move found at once, in decimated taps either way.
    public let shiftTaps: Int
    private let stableEvaluations: Int
    private let moveEvaluations: Int

    private var filter: [Float]
    /// The path learned while the estimate was stable, for finding moves.
    private var learnedPath: [Float]
    private var hasLearnedPath = false
    /// The microphone, `shiftTaps` later than `microphoneDelay` gives it, in a ring.
    private var shiftedMicrophone: [Float]
    private var shiftedMicrophoneIndex = 0
    /// The learned path's latest predictions, newest first from `newestPrediction`, twice over.
    private var predictions: [Float]
    private var newestPrediction = 0
    /// Smoothed power of the microphone left by each shifted prediction (index `shiftTaps` is
    /// the unshifted one; a larger index an older prediction, for an echo come later).
    private var shiftedResidualPower: [Float]
    private var shiftedMicrophonePower: Float = 0
    /// Far-end samples the shifted comparison has seen since it last started afresh.
    private var shiftSamples = 0
    private var moveCandidate = 0
    private var moveCandidateEvaluations = 0
    /// The decimated, pre-emphasized reference twice over, newest first from `newest`, so
    /// that the filter's input is one contiguous run.
    private var history: [Float]
    private var newest: Int
    private var historyEnergy: Float = 0
    /// The decimated microphone, delayed by `leadTaps`.
    private var microphoneDelay: [Float]
    private var microphoneDelayIndex = 0
    private var referenceSum: Float = 0
    private var microphoneSum: Float = 0
    private var summed = 0
    private var previousReference: Float = 0
    private var previousMicrophone: Float = 0
    private var samplesSinceEnergyRefresh = 0
    /// Smoothed power (over about half a second) of the microphone and of what the filter
    /// leaves of it, while the far end plays.
    private var microphonePower: Float = 0
    private var residualPower: Float = 0
    private var candidateTap: Int?
    private var candidateEvaluations = 0
    /// The tap of the last estimate given, until the filter has unlearned it.
    private var establishedTap: Int?

    /// The filter's step size: large enough to find a delay within a second of speech, small
    /// enough that double talk does not wipe what it learned.
    private static let stepSize: Float = 0.5
    /// Mean square per decimated sample (full scale 1) below which the far end counts as silent
    /// and the filter does not adapt (about -55 dBFS).
    private static let activeEnergy: Float = 3e-6
    /// How far the peak's square must stand above the mean square of the taps.
    private static let peakRatio: Float = 64
    /// How much of the microphone's power the filter must predict (3 dB or more).
    private static let predictedShare: Float = 0.5
    private static let preEmphasis: Float = 0.9
    /// Smoothing of the powers per decimated sample: about half a second for the estimate,
    /// 50 ms for moves.
    private static let powerSmoothing: Float = 0.001
    private static let shiftPowerSmoothing: Float = 0.01
    /// A move is taken when the unshifted prediction leaves more than this share of the
    /// microphone (the learned alignment explains almost nothing of it any more) while a
    /// shifted one leaves less than `predictedShare`. Voiced speech repeats itself every
    /// pitch period, so a shifted prediction can fit for a moment; then the unshifted one
    /// still fits too, and nothing moves.
    private static let lostShare: Float = 0.8
    /// How far below a new peak an established delay's tap must have fallen before the new
    /// delay replaces it.
    private static let unlearnedRatio: Float = 0.5

    public init(
        sampleRate: Int = VoiceFormat.sampleRate, decimation: Int = 24, leadMilliseconds: Int = 20,
        lagMilliseconds: Int = 250, shiftMilliseconds: Int = 20, stableMilliseconds: Int = 500,
        moveMilliseconds: Int = 150, frameSamples: Int = 240
    ) {
        self.decimation = decimation
        let decimatedRate = sampleRate / decimation
        leadTaps = MediaTime.samples(milliseconds: leadMilliseconds, rate: decimatedRate)
        taps = leadTaps + MediaTime.samples(milliseconds: lagMilliseconds, rate: decimatedRate)
        shiftTaps = min(leadTaps, MediaTime.samples(milliseconds: shiftMilliseconds, rate: decimatedRate))
        stableEvaluations = max(1, MediaTime.samples(milliseconds: stableMilliseconds, rate: sampleRate) / max(1, frameSamples))
        moveEvaluations = max(1, MediaTime.samples(milliseconds: moveMilliseconds, rate: sampleRate) / max(1, frameSamples))
        filter = [Float](repeating: 0, count: taps)
        learnedPath = [Float](repeating: 0, count: taps)
        shiftedMicrophone = [Float](repeating: 0, count: shiftTaps + 1)
        predictions = [Float](repeating: 0, count: 2 * (2 * shiftTaps + 1))
        shiftedResidualPower = [Float](repeating: 0, count: 2 * shiftTaps + 1)
        history = [Float](repeating: 0, count: 2 * taps)
        newest = taps - 1
        microphoneDelay = [Float](repeating: 0, count: leadTaps + 1)
    }

    /// Takes one frame of the reference (as the canceller gets it) and the microphone frame
    /// it goes with; returns the echo's delay behind the reference, in samples of the full
    /// rate, when an estimate can be trusted now.
    public mutating func observe(reference: [Int16], microphone: [Int16]) -> Int? {
        let count = min(reference.count, microphone.count)
        var anyActive = false
        for index in 0..<count {
            referenceSum += Float(reference[index])
            microphoneSum += Float(microphone[index])
            summed += 1
            guard summed == decimation else { continue }
            let scale = 1 / (Float(decimation) * 32768)
            anyActive = push(reference: referenceSum * scale, microphone: microphoneSum * scale) || anyActive
            referenceSum = 0
            microphoneSum = 0
            summed = 0
        }
        if anyActive {
            followMove()
            evaluate()
        }
        return stableEstimate
    }

    /// Forgets what was learned: the reference moved, so the filter's delays are no longer its.
    public mutating func restart() {
        for index in filter.indices { filter[index] = 0 }
        for index in history.indices { history[index] = 0 }
        for index in microphoneDelay.indices { microphoneDelay[index] = 0 }
        historyEnergy = 0
        microphonePower = 0
        residualPower = 0
        candidateTap = nil
        candidateEvaluations = 0
        establishedTap = nil
        hasLearnedPath = false
        forgetShifts()
    }

    private var stableEstimate: Int? {
        guard let candidateTap, candidateEvaluations >= stableEvaluations else { return nil }
        return (candidateTap - leadTaps) * decimation
    }

    /// One decimated sample of each signal; returns whether the far end was active.
    private mutating func push(reference rawReference: Float, microphone rawMicrophone: Float) -> Bool {
        let reference = rawReference - Self.preEmphasis * previousReference
        previousReference = rawReference
        let microphone = rawMicrophone - Self.preEmphasis * previousMicrophone
        previousMicrophone = rawMicrophone

        let leaving = history[newest + taps - 1]
        newest = newest == 0 ? taps - 1 : newest - 1
        history[newest] = reference
        history[newest + taps] = reference
        historyEnergy += reference * reference - leaving * leaving
        samplesSinceEnergyRefresh += 1
        if samplesSinceEnergyRefresh >= taps { refreshEnergy() }

        let delayed = microphoneDelay[microphoneDelayIndex]
        microphoneDelay[microphoneDelayIndex] = microphone
        microphoneDelayIndex = (microphoneDelayIndex + 1) % microphoneDelay.count

        let active = historyEnergy / Float(taps) > Self.activeEnergy
        if hasLearnedPath {
            compareShifts(prediction: predict(with: learnedPath), microphone: delayed, active: active)
        }
        guard active else { return false }
        let start = newest
        let count = taps
        let predicted = predict(with: filter)
        let error = delayed - predicted
        let step = Self.stepSize * error / (historyEnergy + 1e-9)
        filter.withUnsafeMutableBufferPointer { h in
            history.withUnsafeBufferPointer { x in
                for k in 0..<count { h[k] += step * x[start + k] }
            }
        }
        microphonePower += Self.powerSmoothing * (delayed * delayed - microphonePower)
        residualPower += Self.powerSmoothing * (error * error - residualPower)
        return true
    }

    /// The path's prediction of the newest sample: a dot product over the taps, in the C
    /// kernel, which adds eight lanes at a time where a Swift loop adds one (Swift keeps the
    /// order of a float sum, so it cannot vectorise one). It runs twice per decimated sample,
    /// 4000 times a second.
    private func predict(with path: [Float]) -> Float {
        path.withUnsafeBufferPointer { h in
            history.withUnsafeBufferPointer { x in
                intercom_dot(h.baseAddress!, x.baseAddress! + newest, Int32(taps))
            }
        }
    }

    /// Sums the history's energy afresh, so that rounding never builds up.
    private mutating func refreshEnergy() {
        historyEnergy = history.withUnsafeBufferPointer { x in
            intercom_dot(x.baseAddress! + newest, x.baseAddress! + newest, Int32(taps))
        }
        samplesSinceEnergyRefresh = 0
    }

    /// Measures how well the microphone, `shiftTaps` later, fits each of the learned path's
    /// last predictions.
    private mutating func compareShifts(prediction: Float, microphone: Float, active: Bool) {
        let span = 2 * shiftTaps + 1
        newestPrediction = newestPrediction == 0 ? span - 1 : newestPrediction - 1
        predictions[newestPrediction] = prediction
        predictions[newestPrediction + span] = prediction
        let shifted = shiftedMicrophone[shiftedMicrophoneIndex]
        shiftedMicrophone[shiftedMicrophoneIndex] = microphone
        shiftedMicrophoneIndex = (shiftedMicrophoneIndex + 1) % shiftedMicrophone.count
        guard active else { return }
        shiftSamples += 1
        shiftedMicrophonePower += Self.shiftPowerSmoothing * (shifted * shifted - shiftedMicrophonePower)
        let first = newestPrediction
        predictions.withUnsafeBufferPointer { p in
            shiftedResidualPower.withUnsafeMutableBufferPointer { power in
                for index in 0..<span {
                    let error = shifted - p[first + index]
                    power[index] += Self.shiftPowerSmoothing * (error * error - power[index])
                }
            }
        }
    }

    /// When the learned alignment has stopped explaining the microphone and a shifted one
    /// has explained it for `moveMilliseconds` of far-end signal, moves the filter (and the
    /// delay it gives) by that shift.
    private mutating func followMove() {
        // Until the smoothed powers have seen a few of their time constants, none is a figure.
        guard hasLearnedPath, Float(shiftSamples) * Self.shiftPowerSmoothing >= 3 else { return }
        var best = shiftTaps
        for index in shiftedResidualPower.indices where shiftedResidualPower[index] < shiftedResidualPower[best] {
            best = index
        }
        let shift = best - shiftTaps
        let lost = shiftedResidualPower[shiftTaps] > Self.lostShare * shiftedMicrophonePower
        let fits = shiftedResidualPower[best] < (1 - Self.predictedShare) * shiftedMicrophonePower
        guard abs(shift) > 1, lost, fits else {
            moveCandidateEvaluations = 0
            // The learned path still fits where it is: take in what the filter learned since
            // (the room changes slowly too), while the filter's own estimate is stable.
            if abs(shift) <= 1, fits, stableEstimate != nil { Self.copy(filter, into: &learnedPath) }
            return
        }
        if moveCandidateEvaluations > 0, abs(shift - moveCandidate) <= 1 {
            moveCandidateEvaluations += 1
        } else {
            moveCandidate = shift
            moveCandidateEvaluations = 1
        }
        guard moveCandidateEvaluations >= moveEvaluations else { return }
        // The echo came `shift` taps later (earlier, when negative): so does the path.
        Self.shift(&learnedPath, by: shift)
        Self.copy(learnedPath, into: &filter)
        if let tap = candidateTap { candidateTap = tap + shift }
        if let tap = establishedTap { establishedTap = tap + shift }
        forgetShifts()
    }

    /// The reference was moved by `samples` (later samples when positive), so the echo now
    /// comes that much later behind it: what was learned moves with it, the established
    /// delay too, so that a peak a pitch period off still has to unlearn it to replace it.
    public mutating func referenceMoved(bySamples samples: Int) {
        let shift = samples / decimation
        Self.shift(&filter, by: shift)
        Self.shift(&learnedPath, by: shift)
        if let tap = candidateTap { candidateTap = tap + shift }
        if let tap = establishedTap { establishedTap = tap + shift }
        candidateEvaluations = 0
        forgetShifts()
    }

    /// The reference was moved back onto the echo after a brief move (`EchoMoveTracker`):
    /// the filter still fits, but what the shifted comparison saw meanwhile does not.
    public mutating func echoReturned() {
        forgetShifts()
    }

    private static func shift(_ path: inout [Float], by shift: Int) {
        let count = path.count
        if shift > 0 {
            for k in stride(from: count - 1, through: 0, by: -1) { path[k] = k >= shift ? path[k - shift] : 0 }
        } else {
            for k in 0..<count { path[k] = k - shift < count ? path[k - shift] : 0 }
        }
    }

    /// Element by element: an assignment would share the storage, and the next write to
    /// either would allocate a copy on the capture thread.
    private static func copy(_ source: [Float], into target: inout [Float]) {
        for index in target.indices { target[index] = source[index] }
    }

    private mutating func forgetShifts() {
        for index in shiftedResidualPower.indices { shiftedResidualPower[index] = 0 }
        for index in predictions.indices { predictions[index] = 0 }
        for index in shiftedMicrophone.indices { shiftedMicrophone[index] = 0 }
        shiftedMicrophonePower = 0
        shiftSamples = 0
        moveCandidate = 0
        moveCandidateEvaluations = 0
    }

    /// Whether the filter's peak is a delay to trust now, and whether it stayed put.
    private mutating func evaluate() {
        var peakTap = 0
        var peak: Float = 0
        var energy: Float = 0
        for (tap, weight) in filter.enumerated() {
            let square = weight * weight
            energy += square
            if square > peak {
                peak = square
                peakTap = tap
            }
        }
        let clear = peak > Self.peakRatio * energy / Float(taps)
        let predicts = residualPower < (1 - Self.predictedShare) * microphonePower
        guard clear, predicts else {
            candidateEvaluations = 0
            return
        }
        if let establishedTap, abs(establishedTap - peakTap) > 1, weight(near: establishedTap) > Self.unlearnedRatio * peak.squareRoot() {
            candidateEvaluations = 0
            return
        }
        if let candidateTap, abs(candidateTap - peakTap) <= 1 {
            candidateEvaluations += 1
        } else {
            candidateTap = peakTap
            candidateEvaluations = 1
        }
        if stableEstimate != nil {
            establishedTap = candidateTap
            if !hasLearnedPath {
                Self.copy(filter, into: &learnedPath)
                hasLearnedPath = true
                forgetShifts()
            }
        }
    }

    /// The largest magnitude of the filter's taps within one of `tap`.
    private func weight(near tap: Int) -> Float {
        var largest: Float = 0
        for index in max(0, tap - 1)...min(taps - 1, tap + 1) { largest = max(largest, abs(filter[index])) }
        return largest
    }
}
