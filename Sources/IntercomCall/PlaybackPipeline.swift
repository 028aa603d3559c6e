import IntercomCore
import IntercomIO
import Synchronization

/// The receive path, run period by period on the playback thread: inbox ring → one receive
/// chain per SSRC (jitter buffer → Opus → drift correction) → mixer → speaker.
///
/// The thread owns every jitter buffer; the network thread only fills the inbox ring.
final class PlaybackPipeline {
    private let sink: AudioSink
    private let inbox: RecyclingRing<ReceivedPacket>
    private let mixer: StreamMixer
    /// The period being mixed, kept from period to period so that mixing allocates nothing.
    private var period: [Float]
    private var periodsSincePublish = 0
    /// Each stream's figures, gathered here before they are published.
    private var streams: [StreamStatistics] = []
    private let undecodable = PlaybackCounter()
    /// Periods the sink failed to take.
    private var sinkErrors = 0
    /// Figures for other threads; the playback thread only ever *tries* this lock.
    let snapshot = Mutex(PlaybackSnapshot())

    private let echoReference: EchoReference
    /// Talk tones for our own speaker, from the capture thread.
    let localTones = SPSCRing<[Float]>(capacity: 8)
    private var playingTone: ArraySlice<Float> = []
    /// Volume changes per peer stream, from the user interface (a paired device's packets
    /// carry its remembered gain instead).
    let gains = SPSCRing<(ssrc: UInt32, gain: Float)>(capacity: 32)

    init(sink: AudioSink, configuration: CallConfiguration, inbox: RecyclingRing<ReceivedPacket>, echoReference: EchoReference) throws {
        self.sink = sink
        self.echoReference = echoReference
        self.inbox = inbox
        period = [Float](repeating: 0, count: configuration.period.samples)
        // A stream's frame length is learned from its packets; until then, a robust frame's.
        let jitter = JitterBufferConfiguration(
            frameLength: configuration.encoder.frameLength, maximumDelay: MediaTime.nanoseconds(configuration.maximumJitterDelay)
        )
        let undecodable = self.undecodable
        mixer = StreamMixer(
            jitterBufferConfiguration: jitter, maximumStreams: SourceTable<[UInt8]>.Limits().total,
            ducking: PageDucking(depthDecibels: Double(configuration.pageDuckingDecibels))
        ) { _ in
            (OpusPlayoutDecoder(undecodable: undecodable, spent: { inbox.giveBack(.spare(consume $0)) }), ResamplingRateAdjuster.make())
        }
    }

    func run(_ loop: LoopTurns) {
        while loop.next() {
            let now = SystemClock.monotonicNanoseconds()
            while let (ssrc, gain) = gains.pop() { mixer.setGain(gain, for: ssrc) }
            while var packet = inbox.pop() {
                if packet.isGoodbye {
                    mixer.remove(ssrc: packet.ssrc)
                    continue
                }
                mixer.insert(
                    ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                    marker: packet.marker, payload: packet.takePayload(), arrivalTime: packet.arrivalTime,
                    gain: packet.gain, isPage: packet.isPage
                )
            }
            period.withUnsafeMutableBufferPointer { mixer.pull(into: $0, now: now) }
            if playingTone.isEmpty, let tone = localTones.pop() { playingTone = tone[...] }
            if !playingTone.isEmpty {
                let count = min(period.count, playingTone.count)
                for i in 0..<count { period[i] = max(-1, min(1, period[i] + playingTone[playingTone.startIndex + i])) }
                playingTone = playingTone.dropFirst(count)
            }
            echoReference.played(period, at: sink.nextFramePlayTime?.nanoseconds ?? SystemClock.monotonicNanoseconds() + sink.delayNanoseconds)
            do {
                try sink.write(period)
            } catch {
                sinkErrors += 1
            }
            periodsSincePublish += 1
            if periodsSincePublish >= 10 { publish() }
        }
        publish()
    }

    /// Copies the figures into the snapshot, into the storage both already have: publishing
    /// allocates nothing once a call runs (readers take copies of their own, `detached()`).
    private func publish() {
        streams.removeAll(keepingCapacity: true)
        mixer.forEachStream { ssrc, statistics, level, playoutRate, isPage in
            var stream = StreamStatistics(stream: (ssrc, statistics, level, playoutRate))
            stream.page = isPage
            streams.append(stream)
        }
        let (undecodable, sinkErrors) = (undecodable.count, sinkErrors)
        let speakerQueue = sink.delayNanoseconds
        let published: Bool? = snapshot.withLockIfAvailable { snapshot in
            snapshot.streams.removeAll(keepingCapacity: true)
            snapshot.streams.append(contentsOf: streams)
            snapshot.speakerQueue = speakerQueue
            snapshot.undecodable = undecodable
            snapshot.sinkErrors = sinkErrors
            return true
        }
        // A reader held the lock: try again next period rather than wait.
        if published != nil { periodsSincePublish = 0 }
    }
}

/// The playback side's view of the call.
struct PlaybackSnapshot: Sendable {
    var streams: [StreamStatistics] = []
    var sinkErrors = 0
    var undecodable = 0
    /// Nanoseconds from writing a period to hearing it (the sink's queue).
    var speakerQueue: UInt64 = 0

    /// A copy whose list has storage of its own, for a reader to keep (see
    /// `NetworkSnapshot.detached`): the playback thread must not copy a list a reader shares.
    func detached() -> PlaybackSnapshot {
        var copy = self
        copy.streams = streams.map { $0 }
        return copy
    }
}
