/// The table of incoming streams, one per sender SSRC, mixed into one output.
///
/// A stream is created on the first packet of a new SSRC (a peer that restarts comes back with a
/// new SSRC) and removed once it has received nothing for `idleTimeout` and has nothing left to play.
/// Not thread-safe: the owner serializes `insert` (network) and `pull` (audio) calls.
public final class StreamMixer {
    private struct Entry {
        let ssrc: UInt32
        let stream: ReceiveStream
        var gain: Float = 1
        var lastArrival: UInt64
        var level: Float = 0
        /// A page (`insert`'s `isPage`): played over the others, which `ducking` turns down meanwhile.
        var isPage = false
    }

    /// How long a stream may receive nothing before it is removed (once it has nothing left to play), in nanoseconds.
    public let idleTimeout: UInt64
    /// Streams at once; a new SSRC beyond it is not played (the network thread's source table
    /// keeps fewer, so this only matters when its goodbyes could not be delivered).
    public let maximumStreams: Int
    private let configuration: JitterBufferConfiguration
    private let makeDecoderAndAdjuster: (_ ssrc: UInt32) -> (decoder: any FrameDecoder, rateAdjuster: any RateAdjuster)?
    /// Few peers: a small array keeps the mixing order deterministic and lookups cheap.
    private var entries: [Entry] = []
    private var limiter: SoftLimiter
    private var ducking: PageDucking
    /// RMS (full scale 1) above which a page's period counts as sounding: well below a chime's
    /// quietest tail, above what a decoder's comfort noise leaves.
    private static let pageSoundLevel: Float = 0.0005
    private var streamSamples: [Float] = []
    /// The final figures of streams that ended (goodbye or silence), newest last, so that a
    /// call's totals still count them; bounded, since strangers can start and end streams.
    private var finished: [(ssrc: UInt32, statistics: JitterBufferStatistics, isPage: Bool)] = []
    public static let finishedStreamsKept = 16

    /// Creates an empty mixer; `makeDecoderAndAdjuster` is called for each new SSRC, and may return nil to ignore that stream.
    public init(
        jitterBufferConfiguration: JitterBufferConfiguration = JitterBufferConfiguration(),
        idleTimeout: UInt64 = MediaTime.nanoseconds(.seconds(5)),
        maximumStreams: Int = 64,
        limiter: SoftLimiter = SoftLimiter(),
        ducking: PageDucking = PageDucking(),
        makeDecoderAndAdjuster: @escaping (_ ssrc: UInt32) -> (decoder: any FrameDecoder, rateAdjuster: any RateAdjuster)?
    ) {
        configuration = jitterBufferConfiguration
        self.idleTimeout = idleTimeout
        self.maximumStreams = maximumStreams
        self.limiter = limiter
        self.ducking = ducking
        self.makeDecoderAndAdjuster = makeDecoderAndAdjuster
    }

    /// SSRCs of the streams currently in the table, in order of creation.
    public var ssrcs: [UInt32] { entries.map(\.ssrc) }

    /// Per stream, in order of creation (the ended ones first, silent): SSRC, statistics, RMS
    /// level of its last pulled chunk (after gain), playout rate ratio.
    public var streamStatistics: [(ssrc: UInt32, statistics: JitterBufferStatistics, level: Float, playoutRate: Double)] {
        var all: [(ssrc: UInt32, statistics: JitterBufferStatistics, level: Float, playoutRate: Double)] = []
        forEachStream { ssrc, statistics, level, playoutRate, _ in all.append((ssrc, statistics, level, playoutRate)) }
        return all
    }

    /// `streamStatistics` one by one, in the same order, without making a list of them, and
    /// whether each was a page (an ended one keeps saying so: a page is short, and its stream
    /// often ends before anyone reads the figures).
    public func forEachStream(
        _ body: (_ ssrc: UInt32, _ statistics: JitterBufferStatistics, _ level: Float, _ playoutRate: Double, _ isPage: Bool) -> Void
    ) {
        for ended in finished { body(ended.ssrc, ended.statistics, 0, 1, ended.isPage) }
        for entry in entries { body(entry.ssrc, entry.stream.statistics, entry.level, entry.stream.playoutRateRatio, entry.isPage) }
    }

    /// Sets the gain of the stream with this SSRC; ignored when there is no such stream.
    public func setGain(_ gain: Float, for ssrc: UInt32) {
        guard let index = entries.firstIndex(where: { $0.ssrc == ssrc }) else { return }
        entries[index].gain = gain
    }


    /// Stops playing a stream at once (its sender said goodbye or left): no concealment follows.
    public func remove(ssrc: UInt32) {
        end { $0.ssrc == ssrc }
    }

    private func end(where shouldEnd: (Entry) -> Bool) {
        for entry in entries where shouldEnd(entry) {
            finished.append((entry.ssrc, entry.stream.statistics, entry.isPage))
            entry.stream.end()
        }
        if finished.count > Self.finishedStreamsKept { finished.removeFirst(finished.count - Self.finishedStreamsKept) }
        entries.removeAll(where: shouldEnd)
    }

    /// Routes a received packet to its stream, creating the stream for a new SSRC. `gain`, when
    /// given, is the stream's from now on (a paired device's remembered volume); a packet sent
    /// as a page makes its stream one: while it sounds, the others play quieter.
    public func insert(
        ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32, marker: Bool, payload: consuming [UInt8], arrivalTime now: UInt64,
        gain: Float? = nil, isPage: Bool = false
    ) {
        let index: Int
        if let existing = entries.firstIndex(where: { $0.ssrc == ssrc }) {
            index = existing
        } else {
            guard entries.count < maximumStreams, let components = makeDecoderAndAdjuster(ssrc) else { return }
            let stream = ReceiveStream(configuration: configuration, decoder: components.decoder, rateAdjuster: components.rateAdjuster)
            entries.append(Entry(ssrc: ssrc, stream: stream, lastArrival: now))
            index = entries.endIndex - 1
        }
        entries[index].lastArrival = now
        if let gain { entries[index].gain = gain }
        if isPage { entries[index].isPage = true }
        entries[index].stream.insert(sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, payload: consume payload, arrivalTime: now)
    }

    /// Returns exactly `count` samples: every stream summed with its gain, then soft-limited.
    public func pull(count: Int, now: UInt64) -> [Float] {
        var output = [Float](repeating: 0, count: count)
        output.withUnsafeMutableBufferPointer { pull(into: $0, now: now) }
        return output
    }

    /// Fills `output` with the mix; allocates nothing beyond the decoders' output once its scratch buffer has grown to `output.count`.
    public func pull(into output: UnsafeMutableBufferPointer<Float>, now: UInt64) {
        end { now > $0.lastArrival && now - $0.lastArrival >= idleTimeout && $0.stream.bufferedPacketCount == 0 }
        output.update(repeating: 0)
        if streamSamples.count < output.count {
            streamSamples = Array(repeating: 0, count: output.count)
        }
        // Pages first: whether one sounded in this period sets how far the others go down.
        var pageSounded = false
        for index in entries.indices where entries[index].isPage {
            mix(entry: index, into: output, now: now, duck: (1, 1))
            pageSounded = pageSounded || entries[index].level > Self.pageSoundLevel
        }
        let duck = ducking.advance(pageSounded: pageSounded, samples: output.count, now: now)
        for index in entries.indices where !entries[index].isPage {
            mix(entry: index, into: output, now: now, duck: duck)
        }
        limiter.process(output)
    }

    /// Adds one stream's period to `output` with its gain, times `duck` going from its first
    /// to its last value over the period.
    private func mix(entry index: Int, into output: UnsafeMutableBufferPointer<Float>, now: UInt64, duck: (first: Float, last: Float)) {
        let gain = entries[index].gain
        let stream = entries[index].stream
        let step = output.count > 1 ? (duck.last - duck.first) / Float(output.count - 1) : 0
        let energy = streamSamples.withUnsafeMutableBufferPointer { scratch in
            let samples = UnsafeMutableBufferPointer(rebasing: scratch[..<output.count])
            stream.pull(into: samples, now: now)
            var energy: Float = 0
            for sampleIndex in samples.indices {
                let sample = samples[sampleIndex] * gain * (duck.first + step * Float(sampleIndex))
                output[sampleIndex] += sample
                energy += sample * sample
            }
            return energy
        }
        entries[index].level = output.isEmpty ? 0 : (energy / Float(output.count)).squareRoot()
    }
}
