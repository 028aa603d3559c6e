/// One incoming stream's chain: jitter buffer → decoder → rate adjuster, pulled by the playback device.
///
/// Not thread-safe: the owner serializes `insert` (network) and `pull` (audio) calls.
public final class ReceiveStream {
    /// Input the rate adjuster may read beyond `count × ratio` (interpolation looks one sample ahead, plus rounding).
    private static let adjusterLookahead = 2
    /// A decoded frame whose every sample stays below this (about −50 dBFS) is silence that
    /// may be left out to catch up with the target delay once a jittery spell is over: a pause
    /// 10 ms shorter is not heard.
    private static let quietPeak: Float = 0.003
    /// The longest Opus packet, 120 ms.
    private static let longestFrameSamples = VoiceFormat.samples(milliseconds: 120)

    private var jitterBuffer: JitterBuffer
    private let decoder: any FrameDecoder
    private let rateAdjuster: any RateAdjuster
    /// Decoded samples not yet played; kept just above one pull, since everything in it adds delay.
    private var decodedSamples: SampleQueue
    /// The frame the decoder rendered last, kept so that rendering reuses its storage.
    private var rendered: [Float] = []

    /// Creates a stream with an empty jitter buffer.
    public init(configuration: JitterBufferConfiguration = JitterBufferConfiguration(), decoder: any FrameDecoder, rateAdjuster: any RateAdjuster) {
        jitterBuffer = JitterBuffer(configuration: configuration)
        self.decoder = decoder
        self.rateAdjuster = rateAdjuster
        // Room for a pull plus the longest Opus packet (120 ms), so playout does not allocate.
        decodedSamples = SampleQueue(reservingCapacity: 16_384)
        rendered.reserveCapacity(Self.longestFrameSamples)
    }

    /// Counters and delays; `currentDelay` includes the decoded samples waiting to be played.
    public var statistics: JitterBufferStatistics { jitterBuffer.statistics }

    /// Source samples consumed per output sample at the moment.
    public var playoutRateRatio: Double { jitterBuffer.playoutRateRatio }

    /// Packets waiting in the jitter buffer.
    public var bufferedPacketCount: Int { jitterBuffer.bufferedPacketCount }

    /// Adds a received packet; `now` is its arrival time in nanoseconds of the monotonic clock.
    /// A payload the jitter buffer does not keep goes to the decoder's `discard`.
    public func insert(sequenceNumber: UInt16, timestamp: UInt32, marker: Bool, payload: consuming [UInt8], arrivalTime now: UInt64) {
        jitterBuffer.insert(
            sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, payload: consume payload, arrivalTime: now,
            discarding: { decoder.discard($0) }
        )
    }

    /// Gives the payloads still waiting back to the decoder (`discard`): the stream ends.
    public func end() {
        jitterBuffer.discardWaitingPackets { decoder.discard($0) }
    }

    /// Returns exactly `count` samples to play from `now` on.
    public func pull(count: Int, now: UInt64) -> [Float] {
        var output = [Float](repeating: 0, count: count)
        output.withUnsafeMutableBufferPointer { pull(into: $0, now: now) }
        return output
    }

    /// Fills `output` with the samples to play from `now` on; allocates nothing but what the decoder does.
    public func pull(into output: UnsafeMutableBufferPointer<Float>, now: UInt64) {
        let ratio = jitterBuffer.playoutRateRatio
        let needed = Int((Double(output.count) * ratio).rounded(.up)) + Self.adjusterLookahead
        jitterBuffer.outputQueueAllowance = UInt64(MediaTime.nanoseconds(samples: Int64(needed)))
        jitterBuffer.pulling(at: now, period: UInt64(MediaTime.nanoseconds(samples: Int64(output.count))))
        while decodedSamples.count < needed {
            // The next frame starts playing once everything already decoded has been played.
            let queuedDuration = MediaTime.nanoseconds(samples: Int64((Double(decodedSamples.count) / ratio).rounded()))
            let (decision, samples) = jitterBuffer.nextFrame(now: now + UInt64(queuedDuration), discarding: { decoder.discard($0) })
            let decoded = decision.isDecode
            decoder.render(consume decision, samples: samples, into: &rendered)
            if decoded, isSkippable(rendered) { continue }
            if rendered.isEmpty {
                decodedSamples.appendSilence(max(samples, 1))
            } else {
                decodedSamples.append(contentsOf: rendered)
            }
        }
        let consumed = decodedSamples.withSamples { rateAdjuster.adjust($0, into: output, ratio: ratio) }
        decodedSamples.removeFirst(consumed)
    }

    /// Whether the frame is silence that catching up may leave out.
    private func isSkippable(_ frame: [Float]) -> Bool {
        !frame.isEmpty && jitterBuffer.isCatchingUp(frameNanoseconds: MediaTime.nanoseconds(samples: Int64(frame.count)))
            && frame.allSatisfy { abs($0) < Self.quietPeak }
    }
}
