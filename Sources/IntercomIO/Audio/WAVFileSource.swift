import IntercomCore

/// A WAV file as the microphone: any common rate and channel count, converted to 48 kHz
/// mono, and released in real time from a monotonic clock.
public final class WAVFileSource: AudioSource {
    public var path: String { reader.path }
    /// Read as the call goes, a block at a time: a long recording costs no more memory than a short one.
    private let reader: WAVReader
    private var ended = false
    private var pacer: FramePacer
    public private(set) var firstSampleTime: WallClockTime?

    /// Frames are handed over the moment they are complete: nothing waits behind them.
    public var delayNanoseconds: UInt64 { 0 }

    /// The frame just read began one frame period before it was handed over.
    public var lastFrameCaptureTime: MonotonicInstant? { pacer.dueTime(offset: -1) }

    /// Until it is set, the file waits at its start and the source hands over silence (a page
    /// waits for its devices' sessions: said before them, its first words would be lost).
    private let start: SharedFlag?

    public init(path: String, frameLength: FrameLength, start: SharedFlag? = nil) throws(AudioEndpointError) {
        reader = try WAVReader(path: path)
        pacer = FramePacer(frameSamples: frameLength.samples, sampleRate: VoiceFormat.sampleRate)
        self.start = start
    }

    /// The file's length at 48 kHz.
    public var sampleCount: Int { reader.sampleCount }

    public func read(into frame: inout [Int16]) throws(AudioEndpointError) -> Bool {
        // A microphone hands over a frame once all of it has been captured.
        if let start = pacer.waitForNextFrame(offset: 1) { firstSampleTime = start }
        let started = start?.value.load(ordering: .relaxed) ?? true
        var available = 0
        if started, !ended {
            available = try frame.withUnsafeMutableBufferPointer { (buffer) throws(AudioEndpointError) in try reader.read(into: buffer) }
            ended = available < frame.count
        }
        for index in available..<frame.count { frame[index] = 0 }
        return available > 0
    }
}
