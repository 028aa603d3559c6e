import IntercomCore
import Logging

/// An ALSA capture device as the microphone, delivering 48 kHz mono 16-bit frames whatever
/// rate, channel count and sample format the device offers.
///
/// A device that is missing, busy, or fails in use does not stop the caller: `read` then
/// returns silence in real time, and the device is opened again as soon as it is back.
/// Run it on one audio thread; `counters` may be read from any thread.
public final class ALSACaptureSource: AudioSource {
    /// The ALSA PCM name, such as `default`, `hw:CARD=Device` or `plughw:1,0`.
    public let device: String
    public let counters = ALSAStreamCounters()
    private let connection: ALSAReconnector<ALSACaptureStream>
    /// Paces silence while the device is missing; restarted each time it goes.
    private var silencePacer: FramePacer?
    private var isClosed = false
    public private(set) var firstSampleTime: WallClockTime?

    /// Opens `device` for frames of `frameLength`, with a period of about `period`
    /// (one frame if nil) and a buffer of about `bufferMilliseconds`. A device that cannot be
    /// opened is logged once and retried.
    public init(device: String, frameLength: FrameLength, period: FrameLength? = nil, bufferMilliseconds: Int, logger: Logger) {
        self.device = device
        connection = ALSAReconnector(
            device: device, direction: .capture, frameSamples: frameLength.samples, periodSamples: (period ?? frameLength).samples,
            bufferMilliseconds: bufferMilliseconds, counters: counters, logger: logger)
    }

    /// The format the device agreed to, or nil while it is missing. Read it on the thread
    /// that reads audio, or while no read is under way: a reopened device may change it.
    public var negotiated: ALSANegotiatedFormat? { connection.stream?.pcm.format }

    public var delayNanoseconds: UInt64 { connection.stream?.delayNanoseconds ?? 0 }

    /// Fills `frame` with the next captured frame, or with silence while the device is
    /// missing. Returns false only once the source is closed.
    public func read(into frame: inout [Int16]) throws(AudioEndpointError) -> Bool {
        if !isClosed, let stream = connection.current() {
            do {
                try stream.read(into: &frame)
                silencePacer = nil
                if firstSampleTime == nil { firstSampleTime = stream.firstSampleTime }
                return true
            } catch {
                connection.failed(error)
            }
        }
        var pacer = silencePacer ?? FramePacer(frameSamples: frame.count, sampleRate: VoiceFormat.sampleRate)
        let start = pacer.waitForNextFrame(offset: 1)
        silencePacer = pacer
        if firstSampleTime == nil { firstSampleTime = start }
        for i in frame.indices { frame[i] = 0 }
        return !isClosed
    }

    /// Closes the device now rather than when the source is released; later reads return
    /// silence and false.
    public func close() {
        isClosed = true
        connection.close()
    }
}
