import DequeModule

/// Puts one RTP stream's packets back in order and decides, frame by frame, what to play.
///
/// Deterministic: time is only what the caller passes in. The buffer keeps a playout position
/// (the next sequence number and the media time of the next output frame) and steers the delay
/// between a frame's fastest expected arrival and its playout towards `targetDelay`:
/// - the target follows a high quantile of recent relative arrival delays and jumps at once on a late spike;
/// - too little delay is added at once by concealment or silence frames that do not advance the position;
/// - too much delay is removed inaudibly: by skipping silence, or during speech by `playoutRateRatio`.
public struct JitterBuffer: Sendable {
    private struct PlayoutPosition: Sendable {
        /// The packet to decode next.
        var nextSequenceNumber: Int64
        /// Media time (48 kHz, unwrapped) at which the next output frame starts.
        var timestamp: Int64
    }

    /// The tuning this buffer was created with.
    public let configuration: JitterBufferConfiguration
    /// Most output the owner queues ahead of a frame when it fetches it (its playout FIFO), in nanoseconds.
    /// The target includes it so that packets still arrive before their frame is fetched.
    public var outputQueueAllowance: UInt64 = 0

    private var sequenceNumbers = SequenceUnwrapper<UInt16>()
    private var timestamps = SequenceUnwrapper<UInt32>()
    private var packets: Deque<BufferedPacket> = []
    private var receivedHistory = ReceivedSequenceHistory(capacity: 1_024)
    private var arrivalDelay: ArrivalDelayEstimator
    private var networkDelay: NetworkDelayEstimator
    private var interarrivalJitter = InterarrivalJitterEstimator()
    private var frameDuration: FrameDurationEstimator
    private var rateController: PlayoutRateController
    /// Nil until the first frame is played; until then playout waits at the oldest buffered packet.
    private var playout: PlayoutPosition?
    /// Whether the last output continued speech (so a gap should be concealed rather than silenced).
    private var isInSpeech = false
    /// Samples concealed since the last real frame.
    private var concealedRun: Int64 = 0
    private var lowestSequenceNumber: Int64?
    private var highestSequenceNumber: Int64?
    private var counters = JitterBufferStatistics()
    private var lastDelay: Int64 = 0
    /// The owner's last pull and the time between its pulls, in nanoseconds: a packet that
    /// arrives between two pulls can play only from the next one, so that wait is part of
    /// the delay it needs.
    private var pulls: (last: UInt64, period: UInt64)?
    /// How long recent packets waited for the owner's next pull (their `delayQuantile`).
    private var pullWait: DelayHistogram
    /// Whether the newest packet may carry in-band FEC (SILK or hybrid frames): only then is
    /// the configuration's margin kept. Assumed until a first packet says.
    private var newestPacketMayCarryFEC = true

    /// Creates an empty buffer.
    public init(configuration: JitterBufferConfiguration = JitterBufferConfiguration()) {
        self.configuration = configuration
        arrivalDelay = ArrivalDelayEstimator(window: configuration.arrivalWindow)
        networkDelay = NetworkDelayEstimator(
            quantile: configuration.delayQuantile,
            historyTimeConstant: configuration.delayHistoryTimeConstant,
            peakTimeConstant: configuration.peakDelayTimeConstant,
            calmTimeConstant: configuration.calmDelayTimeConstant,
            largestUsefulDelay: configuration.maximumDelay
        )
        frameDuration = FrameDurationEstimator(initialSamples: configuration.frameLength.samples)
        pullWait = DelayHistogram(bucketWidth: Self.pullWaitResolution, range: Self.longestPullWait, fraction: configuration.delayQuantile)
        rateController = PlayoutRateController(configuration: configuration.rateControl)
        packets.reserveCapacity(configuration.capacity)
    }

    /// Source samples to consume per output sample, to shrink delay during speech and absorb clock drift.
    public var playoutRateRatio: Double { rateController.ratio }

    /// Current frame duration in 48 kHz samples, as learned from the stream.
    public var frameSamples: Int { Int(frameDuration.samples) }

    /// Packets waiting to be played.
    public var bufferedPacketCount: Int { packets.count }

    /// Delay of the frame last handed out, from its fastest expected arrival to its playout, in nanoseconds.
    public var currentDelay: UInt64 { UInt64(max(lastDelay, 0)) }

    /// Whether playout runs more than `frameNanoseconds` behind a target that came down because
    /// the link became clean after a spell of lateness: then a quiet frame may be left out to
    /// catch up, where the rate controller's ±0.5 % would take many seconds.
    public func isCatchingUp(frameNanoseconds: Int64) -> Bool {
        networkDelay.isCalmedDown && lastDelay - Int64(targetDelay) > frameNanoseconds
    }

    /// Delay the buffer steers towards, in nanoseconds.
    public var targetDelay: UInt64 {
        let frame = UInt64(frameNanoseconds)
        let margin = newestPacketMayCarryFEC ? UInt64(configuration.marginFrames) * frame : pullWait.quantile
        let wanted = networkDelay.budget + margin + outputQueueAllowance
        return min(max(wanted, configuration.minimumDelay), configuration.maximumDelay)
    }

    /// Counters and delay measures so far.
    public var statistics: JitterBufferStatistics {
        var statistics = counters
        statistics.lost = lostBeforeRestart
        if let lowestSequenceNumber, let highestSequenceNumber {
            statistics.lost += max(0, Int(highestSequenceNumber - lowestSequenceNumber + 1) - (counters.received - receivedBeforeRestart))
        }
        statistics.currentDelay = currentDelay
        statistics.targetDelay = targetDelay
        statistics.interarrivalJitter = interarrivalJitter.jitter
        statistics.typicalArrivalDelay = networkDelay.typicalDelay
        statistics.networkBudget = networkDelay.budget
        statistics.calmDuration = networkDelay.calmDuration
        return statistics
    }

    /// Sequence numbers further than this from the playout point mean the sender started over
    /// (RFC 3550's MAX_DROPOUT).
    static let restartDistance: Int64 = 3000
    private var restartCandidate: Int64?
    private var lostBeforeRestart = 0
    private var receivedBeforeRestart = 0

    /// Bucket width of the pull-wait histogram: a quarter of a millisecond, fine against a 5 ms period.
    private static let pullWaitResolution: UInt64 = 250_000
    /// The longest pull period measured (a 20 ms loop turn, with room to spare).
    private static let longestPullWait: UInt64 = MediaTime.nanoseconds(.milliseconds(40))

    /// The owner starts fetching output at `now` (nanoseconds, monotonic clock), and does so
    /// every `period` nanoseconds.
    public mutating func pulling(at now: UInt64, period: UInt64) {
        pulls = (now, period)
    }

    /// How long a packet arriving at `arrival` waits for the owner's next pull.
    private func waitForPull(arrival: UInt64) -> UInt64 {
        guard let pulls, pulls.period > 0, arrival > pulls.last else { return 0 }
        let sinceLast = (arrival - pulls.last) % pulls.period
        return sinceLast == 0 ? 0 : pulls.period - sinceLast
    }

    /// Hands every waiting packet's payload to `discard`: the stream ends.
    public mutating func discardWaitingPackets(_ discard: (consuming [UInt8]) -> Void) {
        while !packets.isEmpty { discard(packets.removeFirst().payload) }
    }

    /// Forgets the stream but keeps the counters.
    private mutating func restart(discarding discard: (consuming [UInt8]) -> Void) {
        discardWaitingPackets(discard)
        let kept = counters
        let lost = statistics.lost
        self = JitterBuffer(configuration: configuration)
        counters = kept
        lostBeforeRestart = lost
        receivedBeforeRestart = kept.received
    }

    /// Adds a received packet; `now` is its arrival time in nanoseconds of the monotonic clock.
    /// The payload of a packet that is not kept (late, duplicate, pushed out), now or later, goes
    /// to `discard`, so that its storage can be used again.
    public mutating func insert(
        sequenceNumber: UInt16, timestamp: UInt32, marker: Bool, payload: consuming [UInt8], arrivalTime now: UInt64,
        discarding discard: (consuming [UInt8]) -> Void = { _ in }
    ) {
        let sequence = sequenceNumbers.unwrap(sequenceNumber)
        let mediaTimestamp = timestamps.unwrap(timestamp)
        if let playout, abs(sequence - playout.nextSequenceNumber) > Self.restartDistance {
            // Two packets in a row this far from the playout point: the sender started its
            // numbering over under the same SSRC. Start over too, rather than drop every
            // packet as late for good or wait out a gap of thousands of frames.
            guard restartCandidate == sequence - 1 else {
                restartCandidate = sequence
                counters.late += 1
                discard(consume payload)
                return
            }
            restart(discarding: discard)
            insert(sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, payload: consume payload, arrivalTime: now, discarding: discard)
            return
        }
        restartCandidate = nil
        guard receivedHistory.insert(sequence) else {
            counters.duplicated += 1
            discard(consume payload)
            return
        }
        counters.received += 1
        lowestSequenceNumber = min(lowestSequenceNumber ?? sequence, sequence)
        if sequence >= highestSequenceNumber ?? sequence {
            highestSequenceNumber = sequence
            newestPacketMayCarryFEC = OpusTableOfContents.mayCarryFEC(payload)
        }
        frameDuration.record(sequenceNumber: sequence, timestamp: mediaTimestamp)
        interarrivalJitter.record(timestamp: mediaTimestamp, arrival: now)
        // Late packets still describe the network, so they update the delay estimate before being dropped.
        let relativeDelay = arrivalDelay.record(timestampNanoseconds: MediaTime.nanoseconds(samples: mediaTimestamp), arrival: now)
        networkDelay.record(relativeDelay: relativeDelay, arrival: now, frameDuration: UInt64(frameNanoseconds))
        if pulls != nil {
            pullWait.add(waitForPull(arrival: now), retention: NetworkDelayEstimator.retention(UInt64(frameNanoseconds), timeConstant: configuration.delayHistoryTimeConstant))
        }

        if let playout, sequence < playout.nextSequenceNumber {
            counters.late += 1
            discard(consume payload)
            return
        }
        if packets.count >= configuration.capacity {
            discard(packets.removeFirst().payload)
            counters.late += 1
        }
        var index = packets.endIndex
        while index > packets.startIndex, packets[index - 1].sequenceNumber > sequence {
            index -= 1
        }
        let samples = OpusTableOfContents.samples(of: payload).map(Int64.init)
        packets.insert(BufferedPacket(sequenceNumber: sequence, timestamp: mediaTimestamp, marker: marker, payload: payload, samples: samples), at: index)
    }

    /// Decides the next source frame; `now` is when that frame starts playing (nanoseconds, monotonic clock).
    ///
    /// Called each time the playout needs more audio, so on average at the sender's frame rate.
    /// `samples` is the frame's expected length; a decoded packet may render its own length.
    /// Payloads dropped on the way (too late to be of use) go to `discard`.
    public mutating func nextFrame(now: UInt64, discarding discard: (consuming [UInt8]) -> Void = { _ in }) -> (decision: PlayoutDecision, samples: Int) {
        let oldestPacket = packets.first.map { PlayoutPosition(nextSequenceNumber: $0.sequenceNumber, timestamp: $0.timestamp) }
        guard var position = playout ?? oldestPacket else {
            // Nothing received yet.
            return (.comfortSilence(samples: frameSamples), frameSamples)
        }
        dropOverduePackets(at: &position, now: now, discarding: discard)
        alignWithOldestPacket(&position, now: now, discarding: discard)
        lastDelay = delay(ofTimestamp: position.timestamp, at: now)
        let outcome = decide(&position, delayError: lastDelay - Int64(targetDelay), now: now)
        // Until the first frame plays, the start waits at whatever packet is oldest by then.
        if case .decode = outcome.decision {
            playout = position
        } else if playout != nil {
            playout = position
        }
        return outcome
    }

    private var frameNanoseconds: Int64 { MediaTime.nanoseconds(samples: frameDuration.samples) }

    private func delay(ofTimestamp timestamp: Int64, at time: UInt64) -> Int64 {
        arrivalDelay.delay(ofTimestampNanoseconds: MediaTime.nanoseconds(samples: timestamp), at: time)
    }

    /// Frames that would play later than the maximum delay are of no use any more: drop them (as late) rather than fall behind.
    private mutating func dropOverduePackets(at position: inout PlayoutPosition, now: UInt64, discarding discard: (consuming [UInt8]) -> Void) {
        let limit = Int64(configuration.maximumDelay) + frameNanoseconds / 2
        // Only the oldest packet's numbers are held, not its payload, which goes on unshared.
        while let oldest = packets.first.map({ (sequenceNumber: $0.sequenceNumber, timestamp: $0.timestamp) }),
              delay(ofTimestamp: min(oldest.timestamp, position.timestamp), at: now) > limit {
            discard(packets.removeFirst().payload)
            counters.late += 1
            position.nextSequenceNumber = max(position.nextSequenceNumber, oldest.sequenceNumber + 1)
        }
    }

    private mutating func alignWithOldestPacket(_ position: inout PlayoutPosition, now: UInt64, discarding discard: (consuming [UInt8]) -> Void) {
        // Playing a frame whose time was already concealed stretches the delay by that much:
        // worth it only while the delay stays within half a frame of its target.
        let longestDelay = Int64(targetDelay) + frameNanoseconds / 2
        while let oldest = packets.first.map({ (sequenceNumber: $0.sequenceNumber, timestamp: $0.timestamp) }) {
            // Missing frames whose time was already filled by concealment need no more output.
            if oldest.sequenceNumber > position.nextSequenceNumber, oldest.timestamp <= position.timestamp {
                position.nextSequenceNumber = oldest.sequenceNumber
            }
            guard oldest.sequenceNumber == position.nextSequenceNumber, oldest.timestamp < position.timestamp else { return }
            // The due frame came after its time was concealed. While the delay is short of its
            // target (it is growing after lateness recurred), play it now, stretching the delay
            // instead of dropping speech. Otherwise (a lone stall held a burst of packets back),
            // drop it as late: the delay stays where it was rather than carry the stall for
            // seconds, and every later frame plays on time.
            if delay(ofTimestamp: oldest.timestamp, at: now) <= longestDelay {
                position.timestamp = oldest.timestamp
                return
            }
            discard(packets.removeFirst().payload)
            counters.late += 1
            position.nextSequenceNumber = oldest.sequenceNumber + 1
        }
    }

    private mutating func decide(_ position: inout PlayoutPosition, delayError: Int64, now: UInt64) -> (decision: PlayoutDecision, samples: Int) {
        let frame = frameDuration.samples
        var delayError = delayError
        var excess: Int64 { MediaTime.samples(nanoseconds: delayError) }
        guard let next = packets.first else {
            // Nothing buffered: the sender paused, or packets are late or lost.
            return fill(&position, excess: excess, advanceLimit: .max, preferSilence: false)
        }
        // If `next` is not the due packet, the due frame is missing and the frame just before `next`
        // can be rebuilt from the redundancy (FEC) inside `next`: playout must first get there.
        let isDue = next.sequenceNumber == position.nextSequenceNumber
        // The redundancy in `next` rebuilds a frame as long as `next` itself.
        let gap = (isDue ? next.timestamp : next.timestamp - (next.samples ?? frame)) - position.timestamp
        if gap > 0 {
            // Playout has not reached `next` yet: the sender was silent (DTX), or frames are missing before it.
            let fillsWithSilence = isDue || !canConceal
            if !fillsWithSilence || frame + excess < gap {
                return fill(&position, excess: excess, advanceLimit: gap, preferSilence: isDue)
            }
            // The rest of this silence is not needed to stay on target: skip it.
            position.timestamp += gap
            delayError -= MediaTime.nanoseconds(samples: gap)
        }
        let startsTalkSpurt = isDue && next.marker
        if needsStretch(excess: excess, beforeTalkSpurt: startsTalkSpurt) {
            return fill(&position, excess: excess, advanceLimit: 0, preferSilence: startsTalkSpurt)
        }
        playedRealFrame(delayError: delayError, now: now)
        if isDue {
            packets.removeFirst()
            // Its own length: the frame length learned so far may be the previous packets'.
            let length = next.samples ?? frame
            position = PlayoutPosition(nextSequenceNumber: next.sequenceNumber + 1, timestamp: next.timestamp + length)
            return (.decode(payload: next.payload), Int(length))
        }
        let missingSamples = next.timestamp - position.timestamp
        position = PlayoutPosition(nextSequenceNumber: next.sequenceNumber, timestamp: next.timestamp)
        counters.recoveredByFEC += 1
        return (.recoverWithFEC(nextPayload: next.payload, samples: Int(missingSamples)), Int(missingSamples))
    }

    /// In speech, stretching is audible: do it only for a deficit of over half a frame. In silence, any deficit.
    private func needsStretch(excess: Int64, beforeTalkSpurt: Bool) -> Bool {
        if isInSpeech && !beforeTalkSpurt {
            return excess < -frameDuration.samples / 2
        }
        return excess < 0
    }

    private mutating func playedRealFrame(delayError: Int64, now: UInt64) {
        isInSpeech = true
        concealedRun = 0
        rateController.update(delayError: delayError, now: now)
    }

    /// Whether a missing frame would be concealed now (speech is going on and has not been concealed for too long).
    private var canConceal: Bool {
        let concealmentLimit = MediaTime.samples(nanoseconds: Int64(configuration.maximumConcealment))
        return isInSpeech && concealedRun + frameDuration.samples <= concealmentLimit
    }

    /// Emits a frame of concealment or silence, advancing the position by at most `advanceLimit` samples.
    ///
    /// Concealment advances by one frame, or not at all to stretch a large deficit. Silence is
    /// inaudible, so its length and advance are chosen to land the delay on the target exactly.
    private mutating func fill(_ position: inout PlayoutPosition, excess: Int64, advanceLimit: Int64, preferSilence: Bool) -> (decision: PlayoutDecision, samples: Int) {
        let frame = frameDuration.samples
        if canConceal, !preferSilence {
            concealedRun += frame
            counters.concealed += 1
            if excess >= -frame / 2 {
                position.timestamp += min(frame, advanceLimit)
            }
            return (.conceal(samples: Int(frame)), Int(frame))
        }
        isInSpeech = false
        if advanceLimit == 0 {
            let samples = Int(min(frame, max(-excess, 1)))
            return (.comfortSilence(samples: samples), samples)
        }
        position.timestamp += min(max(frame + excess, 0), advanceLimit)
        return (.comfortSilence(samples: Int(frame)), Int(frame))
    }
}
