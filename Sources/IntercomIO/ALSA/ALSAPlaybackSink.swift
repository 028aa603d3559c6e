import IntercomCore
import Logging

/// An ALSA playback device as the speaker, taking 48 kHz mono float frames whatever rate,
/// channel count and sample format the device offers.
///
/// A device that is missing, busy, or fails in use does not stop the caller: `write` then
/// discards frames in real time, and the device is opened again as soon as it is back.
/// Run it on one audio thread; `counters` may be read from any thread.
public final class ALSAPlaybackSink: AudioSink {
    /// The ALSA PCM name, such as `default`, `hw:CARD=Device` or `plughw:1,0`.
    public let device: String
    public let counters = ALSAStreamCounters()
    private let connection: ALSAReconnector<ALSAPlaybackStream>
    /// Paces discarded frames while the device is missing; restarted each time it goes.
    private var discardPacer: FramePacer?
    private var isClosed = false
    public private(set) var firstSampleTime: WallClockTime?

    /// The longest `close` waits for queued audio to play out.
    private static let playOutLimit: UInt64 = 500_000_000

    /// Opens `device` for frames of `frameLength`, with a period of about `period`
    /// (one frame if nil) and a buffer of about `bufferMilliseconds`. A device that cannot be
    /// opened is logged once and retried.
    public init(device: String, frameLength: FrameLength, period: FrameLength? = nil, bufferMilliseconds: Int, logger: Logger) {
        self.device = device
        connection = ALSAReconnector(
            device: device, direction: .playback, frameSamples: frameLength.samples, periodSamples: (period ?? frameLength).samples,
            bufferMilliseconds: bufferMilliseconds, counters: counters, logger: logger)
    }

    /// The format the device agreed to, or nil while it is missing. Read it on the thread
    /// that writes audio, or while no write is under way: a reopened device may change it.
    public var negotiated: ALSANegotiatedFormat? { connection.stream?.pcm.format }

    public var delayNanoseconds: UInt64 {
        connection.stream?.delayNanoseconds ?? discardPacer?.nanosecondsUntilNextFrame(offset: 0) ?? 0
    }

    /// Plays `frame` once the device has room for it, or discards it in real time while the
    /// device is missing.
    public func write(_ frame: [Float]) throws(AudioEndpointError) {
        guard !isClosed else { return }
        if let stream = connection.current() {
            do {
                try stream.write(frame)
                discardPacer = nil
                if firstSampleTime == nil { firstSampleTime = stream.firstSampleTime }
                return
            } catch {
                connection.failed(error)
            }
        }
        var pacer = discardPacer ?? FramePacer(frameSamples: frame.count, sampleRate: VoiceFormat.sampleRate)
        let start = pacer.waitForNextFrame(offset: 0)
        discardPacer = pacer
        if firstSampleTime == nil { firstSampleTime = start }
    }

    /// Lets the queued audio play out (half a second at most), then closes the device;
    /// later writes are ignored.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        connection.stream?.playOut(limit: Self.playOutLimit)
        connection.close()
    }
}
