import IntercomCore
import IntercomDSP
import SystemPackage

/// A WAV file as the microphone: any common rate and channel count, converted to 48 kHz
/// mono, and released in real time from a monotonic clock.
public final class WAVFileSource: AudioSource {
    public let path: String
    private let samples: [Int16]
    private var position = 0
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
        self.path = path
        samples = try WAVRecording.read(path: path)
        pacer = FramePacer(frameSamples: frameLength.samples, sampleRate: VoiceFormat.sampleRate)
        self.start = start
    }

    /// The file's length at 48 kHz.
    public var sampleCount: Int { samples.count }

    public func read(into frame: inout [Int16]) throws(AudioEndpointError) -> Bool {
        // A microphone hands over a frame once all of it has been captured.
        if let start = pacer.waitForNextFrame(offset: 1) { firstSampleTime = start }
        let started = start?.value.load(ordering: .relaxed) ?? true
        let available = started ? max(0, min(frame.count, samples.count - position)) : 0
        for i in 0..<frame.count { frame[i] = i < available ? samples[position + i] : 0 }
        position += available
        return available > 0
    }
}

/// Reads a whole file, with errors that name it.
func readWholeFile(_ path: String) throws(AudioEndpointError) -> [UInt8] {
    do {
        let fd = try FileDescriptor.open(FilePath(path), .readOnly)
        return try fd.closeAfter {
            let size = try fd.seek(offset: 0, from: .end)
            _ = try fd.seek(offset: 0, from: .start)
            var bytes = [UInt8](repeating: 0, count: Int(size))
            let count = try bytes.withUnsafeMutableBytes { try fd.read(into: $0, retryOnInterrupt: true) }
            return Array(bytes.prefix(count))
        }
    } catch let error as Errno {
        throw AudioEndpointError(endpoint: path, reason: error.description)
    } catch {
        throw AudioEndpointError(endpoint: path, reason: "\(error)")
    }
}
