import IntercomCore
import SystemPackage

/// A WAV file as the speaker: written in real time from its first sample, one frame per
/// frame period whether or not anything is playing, so its timeline is the wall clock's.
///
/// Samples go to the file as they come and the header's sizes are brought up to date every
/// second, so a process that is killed leaves a playable file.
public final class WAVFileSink: AudioSink {
    public let path: String
    private var file: FileDescriptor?
    private var pacer: FramePacer
    private var dataBytes = 0
    private var framesSinceHeader = 0
    private let framesPerHeaderUpdate: Int
    /// The frame being written, as PCM: kept so that writing a frame allocates nothing.
    private var encoded: [UInt8] = []
    public private(set) var firstSampleTime: WallClockTime?

    /// A frame written now is heard when the pacer releases it.
    public var delayNanoseconds: UInt64 { pacer.nanosecondsUntilNextFrame(offset: 0) }

    /// The next frame plays at its slot on the file's timeline, however late it is written.
    public var nextFramePlayTime: MonotonicInstant? { pacer.dueTime(offset: 0) }

    public init(path: String, frameLength: FrameLength) throws(AudioEndpointError) {
        self.path = path
        do {
            file = try FileDescriptor.open(
                // A conversation: readable by its owner only, and never written through a link.
                FilePath(path), .writeOnly, options: [.create, .truncate, .noFollow, .closeOnExec], permissions: [.ownerReadWrite]
            )
            _ = try file!.writeAll(WAVCodec.header(sampleRate: VoiceFormat.sampleRate, channels: 1, dataBytes: 0))
        } catch Errno.tooManySymbolicLinkLevels {
            throw AudioEndpointError(endpoint: path, reason: "cannot write: it is a symbolic link, which intercom does not follow")
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "cannot write: \(error)")
        }
        pacer = FramePacer(frameSamples: frameLength.samples, sampleRate: VoiceFormat.sampleRate)
        framesPerHeaderUpdate = max(1, VoiceFormat.sampleRate / frameLength.samples)
    }

    deinit { close() }

    public func write(_ frame: [Float]) throws(AudioEndpointError) {
        guard let file else { return }
        if let start = pacer.waitForNextFrame(offset: 0) { firstSampleTime = start }
        do {
            WAVCodec.encodePCM16(frame, into: &encoded)
            dataBytes += try file.writeAll(encoded)
            framesSinceHeader += 1
            if framesSinceHeader >= framesPerHeaderUpdate {
                try updateHeader(file)
                framesSinceHeader = 0
            }
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "write failed: \(error)")
        }
    }

    public func close() {
        guard let file else { return }
        try? updateHeader(file)
        try? file.close()
        self.file = nil
    }

    /// Brings the header's two sizes up to date, in place (a whole new header would allocate).
    private func updateHeader(_ file: FileDescriptor) throws {
        try writeSize(36 + dataBytes, at: WAVCodec.riffSizeOffset, in: file)
        try writeSize(dataBytes, at: WAVCodec.dataSizeOffset, in: file)
    }

    private func writeSize(_ size: Int, at offset: Int64, in file: FileDescriptor) throws {
        var littleEndian = UInt32(clamping: size).littleEndian
        _ = try withUnsafeBytes(of: &littleEndian) { try file.writeAll(toAbsoluteOffset: offset, $0) }
    }
}
