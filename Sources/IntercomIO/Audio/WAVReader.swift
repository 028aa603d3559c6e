import IntercomCore
import IntercomDSP
import SystemPackage

/// A WAV file read a block at a time and converted as it goes to 48 kHz mono 16-bit samples
/// (channels mixed, other rates resampled). Once open it allocates nothing, so that the
/// capture thread, where a file stands in for the microphone, can read it as a call goes:
/// holding a whole recording, and its bytes and floats while converting it, once set the
/// peak memory of a call fed from a long one.
public final class WAVReader {
    public let path: String
    public let format: WAVCodec.Format
    /// The recording's length at 48 kHz (exact for a 48 kHz file, within a few samples otherwise).
    public let sampleCount: Int
    private let file: FileDescriptor
    /// Where the data chunk's whole frames end in the file, and the next byte to read.
    private let dataEnd: Int
    private var position: Int
    private let resampler: Resampler?
    private var block: [UInt8]
    private var mono: [Float]
    /// Converted samples not yet handed out: `converted[handedOut..<convertedCount]`.
    private var converted: [Float]
    private var convertedCount = 0
    private var handedOut = 0

    /// Bytes of samples read and converted at a time.
    static let blockBytes = 16 * 1024

    public init(path: String) throws(AudioEndpointError) {
        self.path = path
        do {
            file = try FileDescriptor.open(FilePath(path), .readOnly)
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "\(error)")
        }
        do throws(AudioEndpointError) {
            let layout = try Self.layout(of: file, endpoint: path)
            format = layout.format
            let frames = layout.data.count / format.bytesPerFrame
            guard frames > 0 else { throw AudioEndpointError(endpoint: path, reason: "the WAV file holds no audio") }
            position = layout.data.lowerBound
            dataEnd = layout.data.lowerBound + frames * format.bytesPerFrame
            sampleCount = Int(Int64(frames) * Int64(VoiceFormat.sampleRate) / Int64(format.sampleRate))
            do {
                resampler = format.sampleRate == VoiceFormat.sampleRate
                    ? nil : try Resampler(inputRate: format.sampleRate, outputRate: VoiceFormat.sampleRate)
            } catch {
                throw AudioEndpointError(endpoint: path, reason: "cannot convert \(format.sampleRate) Hz: \(error)")
            }
            let framesPerBlock = max(1, Self.blockBytes / format.bytesPerFrame)
            block = [UInt8](repeating: 0, count: framesPerBlock * format.bytesPerFrame)
            mono = []
            mono.reserveCapacity(framesPerBlock)
            converted = [Float](repeating: 0, count: framesPerBlock * VoiceFormat.sampleRate / format.sampleRate + 64)
        } catch {
            try? file.close()
            throw error
        }
    }

    deinit { try? file.close() }

    /// Fills `samples` from their start with the recording's next samples; returns how many
    /// (fewer than asked only at the end of the file).
    public func read(into samples: UnsafeMutableBufferPointer<Int16>) throws(AudioEndpointError) -> Int {
        var filled = 0
        while filled < samples.count {
            if handedOut == convertedCount {
                guard try convertNextBlock() else { break }
                continue
            }
            let count = min(samples.count - filled, convertedCount - handedOut)
            for index in 0..<count { samples[filled + index] = int16(fromFloat: converted[handedOut + index]) }
            filled += count
            handedOut += count
        }
        return filled
    }

    /// The whole recording from where the reader stands.
    public func readAll() throws(AudioEndpointError) -> [Int16] {
        var samples = [Int16](repeating: 0, count: sampleCount + 64)
        let count = try samples.withUnsafeMutableBufferPointer { (buffer) throws(AudioEndpointError) in try read(into: buffer) }
        samples.removeLast(samples.count - count)
        return samples
    }

    /// Reads and converts the next block; false at the end of the data.
    private func convertNextBlock() throws(AudioEndpointError) -> Bool {
        guard position < dataEnd else { return false }
        let count = min(block.count, dataEnd - position)
        let read = try readBytes(count)
        guard read > 0 else { return false }
        let frames = read / format.bytesPerFrame * format.bytesPerFrame
        position += read
        mono.removeAll(keepingCapacity: true)
        do {
            try WAVCodec.decodeFrames(block[0..<frames], format: format, into: &mono, mixingToMono: true)
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "not a readable WAV file (\(error))")
        }
        handedOut = 0
        guard let resampler else {
            for index in mono.indices { converted[index] = mono[index] }
            convertedCount = mono.count
            return true
        }
        var consumed = 0
        convertedCount = 0
        do {
            try mono.withUnsafeBufferPointer { (input) throws(SpeexError) in
                try converted.withUnsafeMutableBufferPointer { (output) throws(SpeexError) in
                    while consumed < input.count, convertedCount < output.count {
                        let step = try resampler.process(
                            UnsafeBufferPointer(rebasing: input[consumed...]), into: UnsafeMutableBufferPointer(rebasing: output[convertedCount...])
                        )
                        consumed += step.consumed
                        convertedCount += step.written
                        if step.consumed == 0 && step.written == 0 { break }
                    }
                }
            }
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "cannot convert \(format.sampleRate) Hz: \(error)")
        }
        return true
    }

    /// Reads up to `count` bytes at `position` into `block`; how many came (fewer at the file's end).
    private func readBytes(_ count: Int) throws(AudioEndpointError) -> Int {
        var filled = 0
        do {
            while filled < count {
                let read = try block.withUnsafeMutableBytes { buffer in
                    try file.read(
                        fromAbsoluteOffset: Int64(position + filled),
                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<count]), retryOnInterrupt: true
                    )
                }
                guard read > 0 else { break }
                filled += read
            }
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "\(error)")
        }
        return filled
    }

    /// The format and where the samples are, from the file's chunks: a data chunk whose size
    /// field overruns the file (a writer that was killed) is read up to the end.
    private static func layout(of file: FileDescriptor, endpoint path: String) throws(AudioEndpointError) -> (format: WAVCodec.Format, data: Range<Int>) {
        func unreadable(_ why: WAVCodec.Error) -> AudioEndpointError {
            AudioEndpointError(endpoint: path, reason: "not a readable WAV file (\(why))")
        }
        func bytes(at offset: Int, count: Int) throws(AudioEndpointError) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            do {
                let read = try bytes.withUnsafeMutableBytes { try file.read(fromAbsoluteOffset: Int64(offset), into: $0, retryOnInterrupt: true) }
                return Array(bytes.prefix(read))
            } catch {
                throw AudioEndpointError(endpoint: path, reason: "\(error)")
            }
        }
        let fileSize: Int
        do {
            fileSize = Int(try file.seek(offset: 0, from: .end))
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "\(error)")
        }
        guard WAVCodec.isRIFFWAVE(try bytes(at: 0, count: 12)) else { throw unreadable(.notRIFFWAVE) }
        var format: WAVCodec.Format?
        var offset = 12
        while let (id, size) = WAVCodec.chunkHeader(try bytes(at: offset, count: 8)) {
            let body = offset + 8
            if id == "fmt " {
                // A format chunk is 16 to 40 bytes; a larger one is read only as far as it matters.
                let chunk = try bytes(at: body, count: min(size, 64))
                do { format = try WAVCodec.format(chunk: chunk[...]) } catch { throw unreadable(error) }
            } else if id == "data" {
                guard let format else { throw unreadable(.missingChunk("fmt ")) }
                return (format, body..<min(body + size, fileSize))
            }
            offset = body + size + (size & 1)
        }
        throw unreadable(.missingChunk(format == nil ? "fmt " : "data"))
    }
}
