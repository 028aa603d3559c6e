/// Decides how much relative arrival delay the jitter buffer must absorb.
///
/// Two views are combined: a high quantile of a slowly forgetting histogram (the steady jitter),
/// and the peak of late bursts that recur (`RecurringLateness`), which then decays.
///
/// Both views forget slowly (a lone stall stays a small share of what they remember, and jitter
/// that pauses and comes back still has its budget). Arrivals are calm when the typical recent
/// delay (the median of the last half second or so) is well below the budget, or the recent
/// delays' tail is: the link became clean. (A busy host's clean link is itself late by several
/// milliseconds, no small part of what a Wi-Fi spell needed; a jittery link's tail is close to
/// its budget.) Lone stalls, as a busy host has, move neither, and a step up of the recent
/// delays shorter than half a calm time constant does not end the calm. While calm, the budget is
/// capped by a ceiling that holds for `calmTimeConstant` and then comes down within a few more
/// to what the calm link itself needs: twice its typical delay plus `calmMargin`, and the late
/// bursts that recurred since the calm began. After `forgetAfterCalm` calm time constants the
/// late spell is over: the views keep only a trace of it and take what the calm taught them,
/// so the delay is back to what the clean link needs within seconds. If lateness comes back
/// before (the jitter only paused), the typical delay rises and the cap goes, back to everything
/// the views remember. On a link that stays clean the ceiling does not bite (its own needs are
/// what the views remember), so the delay there does not move.
struct NetworkDelayEstimator: Sendable {
    /// A spell of calm arrivals.
    private struct Calm: Sendable {
        /// How long the calm has lasted (receiver's clock).
        var duration: UInt64 = 0
        /// The cap on the budget.
        var ceiling: Double
        /// Late bursts that recurred since the calm began.
        var lateness = RecurringLateness()
        /// Whether the late spell before the calm has been forgotten.
        var forgotten = false
        /// How long the typical delay has now been above the calm threshold.
        var excursion: UInt64 = 0
    }

    private var histogram: DelayHistogram
    /// The recent delays, forgotten within about `calmTimeConstant / 2`; their median is the
    /// typical recent delay.
    private var recent: DelayHistogram
    /// The same recent delays' tail (their 90th percentile): what the link needs now.
    private var recentTail: DelayHistogram
    /// Arrivals are calm while what the link needs now is below this share of the budget.
    private static let calmShareOfBudget = 0.6
    private let historyTimeConstant: UInt64
    private let peakTimeConstant: UInt64
    private let calmTimeConstant: UInt64
    private var calm: Calm?
    /// Calm time constants after which the late spell is forgotten.
    private static let forgetAfterCalm: UInt64 = 2
    /// What the views keep of a forgotten late spell: a trace, soon outweighed by the calm link.
    private static let keptShareOfLateSpell = 0.01
    /// Time still to come during which playout may catch up with a budget that came down when
    /// a late spell was forgotten (the ceiling no longer holds it below the views then).
    private var catchingUpLeft: UInt64 = 0
    /// What the ceiling keeps above twice the typical recent delay.
    private static let calmMargin = Double(MediaTime.nanoseconds(.milliseconds(5)))
    private let largestUsefulDelay: UInt64
    private var lateness = RecurringLateness()
    /// The burst of arrivals going on: its largest delay, and when its last packet arrived.
    private var burst: (largestDelay: Double, lastArrival: UInt64)?
    /// The most time one gap between arrivals adds to a calm: a DTX sender still sends a frame
    /// every 400 ms, and a longer silence tells nothing of the link.
    private static func longestCalmStep(_ calmTimeConstant: UInt64) -> UInt64 { calmTimeConstant / 2 }

    init(quantile: Double, historyTimeConstant: UInt64, peakTimeConstant: UInt64, calmTimeConstant: UInt64, largestUsefulDelay: UInt64) {
        histogram = DelayHistogram(bucketWidth: 1_000_000, range: largestUsefulDelay, fraction: quantile)
        recent = DelayHistogram(bucketWidth: 1_000_000, range: largestUsefulDelay, fraction: 0.5)
        recentTail = DelayHistogram(bucketWidth: 1_000_000, range: largestUsefulDelay, fraction: 0.9)
        self.historyTimeConstant = historyTimeConstant
        self.peakTimeConstant = peakTimeConstant
        self.calmTimeConstant = calmTimeConstant
        self.largestUsefulDelay = largestUsefulDelay
    }

    /// The delay to budget for, in nanoseconds; updated as packets arrive, so reading it is cheap.
    private(set) var budget: UInt64 = 0
    /// Whether the budget came down because the link became clean after a spell of lateness
    /// (the calm ceiling holds it, or the spell was just forgotten): the delay should follow it
    /// down now.
    private(set) var isCalmedDown = false

    /// Records one packet's relative delay and its arrival time (nanoseconds, receiver's clock);
    /// `frameDuration` sets how much older packets are forgotten.
    ///
    /// What the link did is remembered in received media rather than wall time, so a silent peer
    /// is not forgotten. A calm is timed on the receiver's clock, as long as packets keep
    /// arriving: between words a sender sends little (DTX), and the link is no less clean for
    /// it. Packets arriving within half a frame of each other belong to one burst.
    mutating func record(relativeDelay: UInt64, arrival: UInt64, frameDuration: UInt64) {
        // A delay the buffer can never absorb is an outlier: it must not pin the target at its maximum.
        guard relativeDelay <= largestUsefulDelay else { return }
        let delay = Double(relativeDelay)
        let elapsed = burst.map { arrival >= $0.lastArrival ? min(arrival - $0.lastArrival, Self.longestCalmStep(calmTimeConstant)) : 0 } ?? frameDuration
        histogram.add(relativeDelay, retention: Self.retention(frameDuration, timeConstant: historyTimeConstant))
        let recentRetention = Self.retention(elapsed, timeConstant: calmTimeConstant / 2)
        recent.add(relativeDelay, retention: recentRetention)
        recentTail.add(relativeDelay, retention: recentRetention)
        let peakRetention = Self.retention(frameDuration, timeConstant: peakTimeConstant)
        lateness.decay(peakRetention)
        calm?.lateness.decay(peakRetention)
        if let current = burst, arrival >= current.lastArrival, arrival - current.lastArrival <= frameDuration / 2 {
            burst = (max(current.largestDelay, delay), arrival)
        } else {
            if let ended = burst {
                lateness.burstEnded(largestDelay: ended.largestDelay)
                calm?.lateness.burstEnded(largestDelay: ended.largestDelay)
            }
            burst = (delay, arrival)
        }
        lateness.burstReached(burst!.largestDelay)
        calm?.lateness.burstReached(burst!.largestDelay)
        let ceiling = calmCeiling(elapsed: elapsed)
        let remembered = self.remembered
        catchingUpLeft -= min(catchingUpLeft, elapsed)
        isCalmedDown = ceiling < remembered || catchingUpLeft > 0
        budget = UInt64(min(remembered, ceiling))
    }

    /// The typical recent delay: the median of the last half second or so, in nanoseconds.
    var typicalDelay: UInt64 { recent.quantile }
    /// How long the calm has lasted, in nanoseconds (0 while arrivals are not calm).
    var calmDuration: UInt64 { calm?.duration ?? 0 }

    /// What the two views remember.
    private var remembered: Double { max(Double(histogram.quantile), lateness.peak) }

    /// The cap on the budget while arrivals are calm; infinite otherwise. Forgets the late
    /// spell once the calm has lasted. `elapsed` is the receiver's time since the packet before.
    private mutating func calmCeiling(elapsed: UInt64) -> Double {
        let typical = Double(recent.quantile)
        guard typical < remembered / 4 || Double(recentTail.quantile) < remembered * Self.calmShareOfBudget else {
            // A short excursion does not end the calm: on a busy host the typical delay of a
            // clean link steps up by several milliseconds now and then for a moment. Lateness
            // that lasts does.
            if var current = calm, current.excursion + elapsed <= calmTimeConstant / 2 {
                current.excursion += elapsed
                calm = current
                return current.ceiling
            }
            calm = nil
            return .infinity
        }
        var current = calm ?? Calm(ceiling: remembered)
        current.excursion = 0
        current.duration += elapsed
        if current.duration <= calmTimeConstant {
            // Lateness that is still growing is no late spell that ended.
            current.ceiling = max(current.ceiling, remembered)
        } else {
            let needed = max(2 * typical + Self.calmMargin, current.lateness.peak)
            current.ceiling = max(needed, current.ceiling * Self.retention(elapsed, timeConstant: calmTimeConstant))
        }
        if !current.forgotten, current.duration > Self.forgetAfterCalm * calmTimeConstant {
            histogram.forget(keeping: Self.keptShareOfLateSpell)
            lateness.forget(keeping: Self.keptShareOfLateSpell, takingOn: current.lateness)
            current.forgotten = true
            catchingUpLeft = Self.forgetAfterCalm * calmTimeConstant
        }
        calm = current
        return current.ceiling
    }

    /// First-order decay factor for one step of `step` with the given time constant.
    static func retention(_ step: UInt64, timeConstant: UInt64) -> Double {
        max(0.5, 1 - Double(step) / Double(timeConstant))
    }
}
