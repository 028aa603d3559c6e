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

    /// Decodes integer PCM (8, 16, 24, 32 bits) or 32-bit float WAV data.
    /// A data chunk whose size field overruns the file (a writer that was killed) is read up to the end.
    public static func decode(_ bytes: [UInt8]) throws(Error) -> Audio {
        guard bytes.count >= 12, ascii(bytes, 0) == "RIFF", ascii(bytes, 8) == "WAVE" else { throw .notRIFFWAVE }
        var format: (code: Int, channels: Int, rate: Int, bits: Int)?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = ascii(bytes, offset)
            let size = Int(readUInt32(bytes, offset + 4))
            let body = offset + 8
            if id == "fmt " {
                guard size >= 16, body + 16 <= bytes.count else { throw .invalidFormat("short 'fmt ' chunk") }
                var code = Int(readUInt16(bytes, body))
                if code == formatExtensible, size >= 40, body + 26 <= bytes.count {
                    code = Int(readUInt16(bytes, body + 24))  // first two bytes of the sub-format GUID
                }
                format = (code, Int(readUInt16(bytes, body + 2)), Int(readUInt32(bytes, body + 4)), Int(readUInt16(bytes, body + 14)))
            } else if id == "data" {
                guard let format else { throw .missingChunk("fmt ") }
                let end = min(body + size, bytes.count)
                return try decodeSamples(bytes[body..<end], format: format)
            }
            offset = body + size + (size & 1)
        }
        throw .missingChunk(format == nil ? "fmt " : "data")
    }

    private static func decodeSamples(
        _ data: ArraySlice<UInt8>, format: (code: Int, channels: Int, rate: Int, bits: Int)
    ) throws(Error) -> Audio {
        guard (1...32).contains(format.channels) else { throw .invalidFormat("\(format.channels) channels") }
        guard (1000...768_000).contains(format.rate) else { throw .invalidFormat("sample rate \(format.rate)") }
        let width = format.bits / 8
        let decodeOne: (ArraySlice<UInt8>, Int) -> Float
        switch (format.code, format.bits) {
        case (formatPCM, 8): decodeOne = { d, i in (Float(d[i]) - 128) / 128 }
        case (formatPCM, 16): decodeOne = { d, i in Float(Int16(bitPattern: UInt16(d[i]) | UInt16(d[i + 1]) << 8)) / 32768 }
        case (formatPCM, 24):
            decodeOne = { d, i in
                let raw = Int32(bitPattern: UInt32(d[i]) << 8 | UInt32(d[i + 1]) << 16 | UInt32(d[i + 2]) << 24)
                return Float(raw >> 8) / 8_388_608
            }
        case (formatPCM, 32):
            decodeOne = { d, i in
                Float(Int32(bitPattern: UInt32(d[i]) | UInt32(d[i + 1]) << 8 | UInt32(d[i + 2]) << 16 | UInt32(d[i + 3]) << 24)) / 2_147_483_648
            }
        case (formatFloat, 32):
            decodeOne = { d, i in
                Float(bitPattern: UInt32(d[i]) | UInt32(d[i + 1]) << 8 | UInt32(d[i + 2]) << 16 | UInt32(d[i + 3]) << 24)
            }
        default: throw .unsupportedEncoding(format: format.code, bitsPerSample: format.bits)
        }
        let frameBytes = width * format.channels
        let count = (data.count / frameBytes) * format.channels
        let start = data.startIndex
        let samples = (0..<count).map { decodeOne(data, start + $0 * width) }
        return Audio(sampleRate: format.rate, channels: format.channels, samples: samples)
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
