/// Reads RIFF/WAVE bytes in the common PCM encodings and writes 16-bit PCM.
///
/// Pure byte handling: file access lives in the I/O layer.
public enum WAVCodec {
    /// Decoded audio: interleaved samples in [-1, 1].
    public struct Audio: Equatable, Sendable {
        public var sampleRate: Int
        public var channels: Int
        public var samples: [Float]

        public init(sampleRate: Int, channels: Int, samples: [Float]) {
            self.sampleRate = sampleRate
            self.channels = channels
            self.samples = samples
        }

        /// Frames (one sample per channel).
        public var frameCount: Int { channels == 0 ? 0 : samples.count / channels }

        /// The channels averaged into one.
        public func mixedToMono() -> [Float] {
            guard channels > 1 else { return samples }
            let scale = 1 / Float(channels)
            return (0..<frameCount).map { frame in
                var sum: Float = 0
                for channel in 0..<channels { sum += samples[frame * channels + channel] }
                return sum * scale
            }
        }
    }

    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        case notRIFFWAVE
        case missingChunk(String)
        case unsupportedEncoding(format: Int, bitsPerSample: Int)
        case invalidFormat(String)

        public var description: String {
            switch self {
            case .notRIFFWAVE: "not a RIFF/WAVE file"
            case .missingChunk(let name): "no '\(name)' chunk"
            case .unsupportedEncoding(let format, let bits): "unsupported encoding (format \(format), \(bits) bits per sample)"
            case .invalidFormat(let why): "invalid format: \(why)"
            }
        }
    }

    /// The size of the header `header(sampleRate:channels:dataBytes:)` writes.
    public static let headerSize = 44

    private static let formatPCM = 1
    private static let formatFloat = 3
    private static let formatExtensible = 0xFFFE

    /// How a file's samples are stored, from its 'fmt ' chunk.
    public struct Format: Equatable, Sendable {
        public var encoding: Int
        public var channels: Int
        public var sampleRate: Int
        public var bitsPerSample: Int

        /// The bytes of one frame (a sample of every channel).
        public var bytesPerFrame: Int { bitsPerSample / 8 * channels }
    }

    /// Reads a 'fmt ' chunk's body, and checks that its samples can be decoded.
    public static func format(chunk body: ArraySlice<UInt8>) throws(Error) -> Format {
        guard body.count >= 16 else { throw .invalidFormat("short 'fmt ' chunk") }
        let bytes = Array(body)
        var code = Int(readUInt16(bytes, 0))
        if code == formatExtensible, bytes.count >= 40 {
            code = Int(readUInt16(bytes, 24))  // first two bytes of the sub-format GUID
        }
        let format = Format(encoding: code, channels: Int(readUInt16(bytes, 2)), sampleRate: Int(readUInt32(bytes, 4)), bitsPerSample: Int(readUInt16(bytes, 14)))
        guard (1...32).contains(format.channels) else { throw .invalidFormat("\(format.channels) channels") }
        guard (1000...768_000).contains(format.sampleRate) else { throw .invalidFormat("sample rate \(format.sampleRate)") }
        _ = try sampleDecoder(format)
        return format
    }

    /// Whether a file's first 12 bytes are a RIFF header of a WAVE file.
    public static func isRIFFWAVE(_ header: [UInt8]) -> Bool {
        header.count >= 12 && ascii(header, 0) == "RIFF" && ascii(header, 8) == "WAVE"
    }

    /// A chunk's 8-byte header: its id and the size of its body (padded to an even length in the file).
    public static func chunkHeader(_ bytes: [UInt8]) -> (id: String, size: Int)? {
        guard bytes.count >= 8 else { return nil }
        return (ascii(bytes, 0), Int(readUInt32(bytes, 4)))
    }

    /// Decodes integer PCM (8, 16, 24, 32 bits) or 32-bit float WAV data.
    /// A data chunk whose size field overruns the file (a writer that was killed) is read up to the end.
    public static func decode(_ bytes: [UInt8]) throws(Error) -> Audio {
        guard isRIFFWAVE(bytes) else { throw .notRIFFWAVE }
        var format: Format?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = ascii(bytes, offset)
            let size = Int(readUInt32(bytes, offset + 4))
            let body = offset + 8
            if id == "fmt " {
                format = try Self.format(chunk: bytes[body..<min(body + size, bytes.count)])
            } else if id == "data" {
                guard let format else { throw .missingChunk("fmt ") }
                let end = min(body + size, bytes.count)
                var samples: [Float] = []
                try decodeFrames(bytes[body..<end], format: format, into: &samples, mixingToMono: false)
                return Audio(sampleRate: format.sampleRate, channels: format.channels, samples: samples)
            }
            offset = body + size + (size & 1)
        }
        throw .missingChunk(format == nil ? "fmt " : "data")
    }

    /// Appends the whole frames of `data` (a stretch of a data chunk that starts on a frame) to
    /// `samples` in [-1, 1]: interleaved as stored, or with the channels averaged into one.
    public static func decodeFrames(
        _ data: ArraySlice<UInt8>, format: Format, into samples: inout [Float], mixingToMono: Bool
    ) throws(Error) {
        let decodeOne = try sampleDecoder(format)
        let width = format.bitsPerSample / 8
        let frames = data.count / format.bytesPerFrame
        let start = data.startIndex
        if !mixingToMono || format.channels == 1 {
            samples.reserveCapacity(samples.count + frames * (mixingToMono ? 1 : format.channels))
            for index in 0..<(frames * (mixingToMono ? 1 : format.channels)) { samples.append(decodeOne(data, start + index * width)) }
            return
        }
        let scale = 1 / Float(format.channels)
        samples.reserveCapacity(samples.count + frames)
        for frame in 0..<frames {
            var sum: Float = 0
            for channel in 0..<format.channels { sum += decodeOne(data, start + (frame * format.channels + channel) * width) }
            samples.append(sum * scale)
        }
    }

    private static func sampleDecoder(_ format: Format) throws(Error) -> (ArraySlice<UInt8>, Int) -> Float {
        switch (format.encoding, format.bitsPerSample) {
        case (formatPCM, 8): return { d, i in (Float(d[i]) - 128) / 128 }
        case (formatPCM, 16): return { d, i in Float(Int16(bitPattern: UInt16(d[i]) | UInt16(d[i + 1]) << 8)) / 32768 }
        case (formatPCM, 24):
            return { d, i in
                let raw = Int32(bitPattern: UInt32(d[i]) << 8 | UInt32(d[i + 1]) << 16 | UInt32(d[i + 2]) << 24)
                return Float(raw >> 8) / 8_388_608
            }
        case (formatPCM, 32):
            return { d, i in
                Float(Int32(bitPattern: UInt32(d[i]) | UInt32(d[i + 1]) << 8 | UInt32(d[i + 2]) << 16 | UInt32(d[i + 3]) << 24)) / 2_147_483_648
            }
        case (formatFloat, 32):
            return { d, i in
                Float(bitPattern: UInt32(d[i]) | UInt32(d[i + 1]) << 8 | UInt32(d[i + 2]) << 16 | UInt32(d[i + 3]) << 24)
            }
        default: throw .unsupportedEncoding(format: format.encoding, bitsPerSample: format.bitsPerSample)
        }
    }

    /// A canonical 44-byte header for 16-bit PCM with `dataBytes` of samples.
    public static func header(sampleRate: Int, channels: Int, dataBytes: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(headerSize)
        out += Array("RIFF".utf8); appendUInt32(&out, UInt32(clamping: 36 + dataBytes))
        out += Array("WAVE".utf8)
        out += Array("fmt ".utf8); appendUInt32(&out, 16)
        appendUInt16(&out, UInt16(formatPCM)); appendUInt16(&out, UInt16(channels))
        appendUInt32(&out, UInt32(sampleRate)); appendUInt32(&out, UInt32(sampleRate * channels * 2))
        appendUInt16(&out, UInt16(channels * 2)); appendUInt16(&out, 16)
        out += Array("data".utf8); appendUInt32(&out, UInt32(clamping: dataBytes))
        return out
    }

    /// Samples in [-1, 1] as little-endian 16-bit PCM, clipped.
    public static func encodePCM16(_ samples: [Float]) -> [UInt8] {
        var out: [UInt8] = []
        encodePCM16(samples, into: &out)
        return out
    }

    /// `encodePCM16` into `out`, replacing what it held: a caller that keeps `out` from frame
    /// to frame reuses its storage and allocates nothing.
    public static func encodePCM16(_ samples: [Float], into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(samples.count * 2)
        for sample in samples {
            let value = UInt16(bitPattern: int16(fromFloat: sample))
            out.append(UInt8(value & 0xFF))
            out.append(UInt8(value >> 8))
        }
    }

    /// Where the two sizes sit in `header`'s 44 bytes: the RIFF chunk's and the data chunk's.
    public static let riffSizeOffset: Int64 = 4
    public static let dataSizeOffset: Int64 = 40

    /// A whole 16-bit PCM file.
    public static func encode(_ audio: Audio) -> [UInt8] {
        let data = encodePCM16(audio.samples)
        return header(sampleRate: audio.sampleRate, channels: audio.channels, dataBytes: data.count) + data
    }

    private static func ascii(_ bytes: [UInt8], _ offset: Int) -> String {
        String(decoding: bytes[offset..<min(offset + 4, bytes.count)], as: UTF8.self)
    }

    private static func readUInt16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    private static func readUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(readUInt16(bytes, offset)) | UInt32(readUInt16(bytes, offset + 2)) << 16
    }

    private static func appendUInt16(_ out: inout [UInt8], _ value: UInt16) {
        out.append(UInt8(value & 0xFF)); out.append(UInt8(value >> 8))
    }

    private static func appendUInt32(_ out: inout [UInt8], _ value: UInt32) {
        appendUInt16(&out, UInt16(value & 0xFFFF)); appendUInt16(&out, UInt16(value >> 16))
    }
}
