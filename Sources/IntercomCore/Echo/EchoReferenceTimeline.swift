/// Lines up what the speaker played with what the microphone captured, for the echo
/// canceller, by time rather than by order of arrival.
///
/// The playback thread reports each frame with the time it starts to be heard; the capture
/// thread asks for the reference of each microphone frame by the time its first sample was
/// captured. Samples are placed on one continuous timeline, so the two threads waking in
/// either order never shifts the reference by a frame: a canceller fed a reference whose
/// delay jumps has to learn the echo path again. The read position advances by exactly one
/// frame per microphone frame and re-syncs only when it has been more than `resyncSamples`
/// off for `resyncAfter` (a device restart, an underrun), so timestamp noise never reaches the
/// canceller: a device's reported time can be a period off for a few frames and come back
/// (seen with 10 ms periods through ALSA's pulse plugin), and each re-sync makes the canceller
/// learn the echo path again. The timeline's clock follows the card's slowly, so a card whose
/// clock drifts against the monotonic clock (by a few hundred ppm) never makes it re-sync.
/// Where the signals moved the read position (`moveRead`), the timestamps are judged from
/// there on from where it was moved to: a placed echo is not put back where the timestamps
/// first said, 100 ms later, again and again.
public struct EchoReferenceTimeline: Sendable {
    public let frameSamples: Int
    public let sampleRate: Int
    /// How much earlier than the capture time the reference is taken, so that it still leads
    /// the echo when the devices' reported delays are a little off.
    public let safetyMarginSamples: Int
    public let resyncSamples: Int
    /// How long the read position must stay off before it re-syncs, in nanoseconds.
    public let resyncAfter: UInt64
    private let capacity: Int

    /// Samples from timeline index `firstIndex` on.
    private var samples: [Int16] = []
    private var firstIndex: Int64 = 0
    /// The timeline's clock: index `anchorIndex` is heard at `anchorTime`.
    private var anchorIndex: Int64 = 0
    private var anchorTime: UInt64?
    private var nextWriteIndex: Int64 = 0
    private var readIndex: Int64?
    /// How far the signals moved the read position from where the timestamps put it
    /// (`moveRead`): the devices' reported delays are off from the echo's by that much, and
    /// stay so. The timestamps are judged, and a re-sync lands, that far from where they say.
    private var readOffset: Int64 = 0
    /// Capture time of the first frame of the current run of frames read too far off.
    private var offSince: UInt64?
    /// The share of each played frame's slip the timeline's clock follows (1/64: at 500 ppm
    /// it lags the card by about a third of a millisecond with 10 ms frames).
    private static let clockFollowingDivisor: Int64 = 64
    /// The largest slip followed, in nanoseconds: drift keeps each slip to a fraction of a
    /// millisecond, as the timeline follows it.
    private static let clockFollowingLimit: Int64 = 1_000_000

    /// Times the read position jumped to follow the devices.
    public private(set) var resyncs = 0
    /// Times the timestamps had been off long enough to re-sync while the echo stayed where the
    /// reference was (`echoStaysPut`): not followed.
    public private(set) var refusedResyncs = 0
    /// Whether the echo's delay is known from the signals (`EchoAlignment`): the timestamps then
    /// move the read position, or put silence in for a pause of the speaker, only when they are
    /// off by more than the signals can see (`lockedResyncSamples`, a device restart), since
    /// under load they can be off by a period or two for seconds while the samples stay where
    /// they were.
    public var isLockedBySignals = false
    public let lockedResyncSamples: Int

    public init(
        frameSamples: Int, sampleRate: Int = VoiceFormat.sampleRate, safetyMarginMilliseconds: Int = 10,
        resyncMilliseconds: Int = 8, resyncAfter: Duration = .milliseconds(100), lockedResyncMilliseconds: Int = 100,
        capacityMilliseconds: Int = 1_000
    ) {
        self.frameSamples = frameSamples
        self.sampleRate = sampleRate
        safetyMarginSamples = MediaTime.samples(milliseconds: safetyMarginMilliseconds, rate: sampleRate)
        resyncSamples = MediaTime.samples(milliseconds: resyncMilliseconds, rate: sampleRate)
        lockedResyncSamples = MediaTime.samples(milliseconds: lockedResyncMilliseconds, rate: sampleRate)
        self.resyncAfter = MediaTime.nanoseconds(resyncAfter)
        capacity = MediaTime.samples(milliseconds: capacityMilliseconds, rate: sampleRate)
    }

    /// Records a frame the speaker plays from `playTime` (monotonic nanoseconds) on.
    public mutating func played(_ frame: [Int16], at playTime: UInt64) {
        guard let anchorTime else {
            anchor(index: nextWriteIndex, time: playTime)
            append(frame)
            return
        }
        let expected = Int64(anchorTime) + nanoseconds(nextWriteIndex - anchorIndex)
        let slip = Int64(playTime) - expected
        // Once the signals place the echo, only a pause longer than they can follow is taken
        // from the timestamps: under load a played frame's time is reported late by a period
        // or two, and silence put in for it was never played, so the echo would come that
        // much earlier than its reference. A real short pause the signals find and follow.
        let pauseLimit = isLockedBySignals ? lockedResyncSamples : resyncSamples
        if slip > nanoseconds(Int64(pauseLimit)) {
            // The speaker paused (an underrun, a device restart): the gap was silent.
            append([Int16](repeating: 0, count: min(capacity, Int(samples(slip)))))
            anchor(index: nextWriteIndex, time: playTime)
        } else if abs(slip) > nanoseconds(Int64(resyncSamples)) {
            anchor(index: nextWriteIndex, time: playTime)
        } else if abs(slip) < Self.clockFollowingLimit {
            // The card's clock runs a little fast or slow against the monotonic clock: let the
            // timeline's clock follow it a fraction of each slip, so that the capture times,
            // which drift with it, keep pointing where the read position already is. A larger
            // slip is a reported time off by a step for a while, not drift: it is not followed.
            self.anchorTime = UInt64(Int64(anchorTime) + slip / Self.clockFollowingDivisor)
        }
        append(frame)
    }

    /// The reference for a microphone frame whose first sample was captured at `captureTime`:
    /// what the speaker played from slightly before then. Silence where nothing was played.
    public mutating func reference(capturedAt captureTime: UInt64) -> [Int16] {
        var output: [Int16] = []
        reference(capturedAt: captureTime, into: &output)
        return output
    }

    /// `reference(capturedAt:)` into `output`, replacing what it held: a caller that keeps it
    /// from frame to frame allocates nothing. `echoStaysPut` says that the signals see the echo
    /// still where the reference is (the canceller cancels it): timestamps that have been off
    /// long enough to re-sync are then taken to be off, and judged from where they are now.
    public mutating func reference(capturedAt captureTime: UInt64, into output: inout [Int16], echoStaysPut: Bool = false) {
        output.removeAll(keepingCapacity: true)
        output.append(contentsOf: repeatElement(0, count: frameSamples))
        guard let anchorTime else { return }
        let ideal = anchorIndex + samples(Int64(captureTime) - Int64(anchorTime)) - Int64(safetyMarginSamples) + readOffset
        let limit = isLockedBySignals ? lockedResyncSamples : resyncSamples
        if let current = readIndex, abs(ideal - current) > Int64(limit) {
            let since = offSince ?? captureTime
            offSince = since
            if captureTime >= since + resyncAfter {
                if echoStaysPut {
                    readOffset += current - ideal
                    refusedResyncs += 1
                } else {
                    resyncs += 1
                    readIndex = ideal
                }
                offSince = nil
            }
        } else {
            offSince = nil
        }
        if readIndex == nil { readIndex = ideal }
        let start = readIndex!
        for i in 0..<frameSamples {
            let position = Int(start + Int64(i) - firstIndex)
            if position >= 0, position < samples.count { output[i] = samples[position] }
        }
        readIndex = start + Int64(frameSamples)
        // Half the capacity stays behind the read position, for `moveRead` to go back to.
        dropBefore(start - Int64(capacity / 2))
    }

    /// Moves the read position by `samples` (later samples when positive): the signals found
    /// that the echo moved against the reference, and this puts it back where the canceller
    /// learned it.
    public mutating func moveRead(bySamples samples: Int) {
        guard let current = readIndex else { return }
        readIndex = current + Int64(samples)
        readOffset += Int64(samples)
        offSince = nil
    }

    private mutating func anchor(index: Int64, time: UInt64) {
        anchorIndex = index
        anchorTime = time
    }

    private mutating func append(_ frame: [Int16]) {
        samples += frame
        nextWriteIndex += Int64(frame.count)
        if samples.count > capacity { dropBefore(nextWriteIndex - Int64(capacity)) }
    }

    private mutating func dropBefore(_ index: Int64) {
        let count = Int(min(max(0, index - firstIndex), Int64(samples.count)))
        guard count > 0 else { return }
        samples.removeFirst(count)
        firstIndex += Int64(count)
    }

    private func nanoseconds(_ samples: Int64) -> Int64 { MediaTime.nanoseconds(samples: samples, rate: sampleRate) }
    private func samples(_ nanoseconds: Int64) -> Int64 { MediaTime.samples(nanoseconds: nanoseconds, rate: sampleRate) }
}
