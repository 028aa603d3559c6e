import IntercomCore

/// Releases frame after frame at the real-time rate of the audio, from a monotonic clock,
/// as a sound card would.
struct FramePacer {
    let frameNanoseconds: UInt64
    private var start: UInt64?
    private var frames: UInt64 = 0

    init(frameSamples: Int, sampleRate: Int) {
        frameNanoseconds = MediaTime.nanoseconds(frames: frameSamples, rate: sampleRate)
    }

    /// When frame number `frames + offset` is due, once the clock has started.
    func dueTime(offset: Int64) -> MonotonicInstant? {
        guard let start else { return nil }
        return MonotonicInstant(nanoseconds: UInt64(Int64(start) + (Int64(frames) + offset) * Int64(frameNanoseconds)))
    }

    /// Time until the next frame is due; zero before the first.
    func nanosecondsUntilNextFrame(offset: UInt64) -> UInt64 {
        guard let start else { return 0 }
        let due = start + (frames + offset) * frameNanoseconds
        let now = SystemClock.monotonicNanoseconds()
        return due > now ? due - now : 0
    }

    /// Sleeps until frame number `frames` is due, `offset` frames after the start, and counts it.
    /// The first call starts the clock and returns the wall-clock time of that start.
    mutating func waitForNextFrame(offset: UInt64) -> WallClockTime? {
        var startedAt: WallClockTime?
        if start == nil {
            start = SystemClock.monotonicNanoseconds()
            startedAt = SystemClock.wallClockNow()
        }
        SystemClock.sleep(untilMonotonic: start! + (frames + offset) * frameNanoseconds)
        frames += 1
        return startedAt
    }
}
