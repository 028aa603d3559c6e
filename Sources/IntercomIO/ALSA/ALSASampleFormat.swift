import CALSA
import IntercomCore

/// The sample formats intercom exchanges with a device, little-endian, in the order it asks
/// for them: 16-bit first, the format of the voice path.
public enum ALSASampleFormat: String, CaseIterable, Sendable {
    case s16 = "S16_LE"
    case s32 = "S32_LE"
    case float = "FLOAT_LE"
    /// 24 bits in the low three bytes of a 32-bit word.
    case s24 = "S24_LE"
    /// 24 bits packed in three bytes.
    case s24Packed = "S24_3LE"

    var pcmFormat: snd_pcm_format_t {
        switch self {
        case .s16: SND_PCM_FORMAT_S16_LE
        case .s32: SND_PCM_FORMAT_S32_LE
        case .float: SND_PCM_FORMAT_FLOAT_LE
        case .s24: SND_PCM_FORMAT_S24_LE
        case .s24Packed: SND_PCM_FORMAT_S24_3LE
        }
    }

    var bytesPerSample: Int {
        switch self {
        case .s16: 2
        case .s24Packed: 3
        case .s32, .float, .s24: 4
        }
    }

    /// Averages the channels of interleaved device frames into mono samples in [-1, 1].
    func mixToMono(_ bytes: UnsafeRawPointer, frames: Int, channels: Int, into mono: UnsafeMutablePointer<Float>) {
        let scale = 1 / Float(channels)
        for frame in 0..<frames {
            var sum: Float = 0
            for channel in 0..<channels { sum += sample(bytes, frame * channels + channel) }
            mono[frame] = sum * scale
        }
    }

    /// Writes each mono sample to every channel of interleaved device frames.
    func spread(_ mono: UnsafePointer<Float>, frames: Int, channels: Int, into bytes: UnsafeMutableRawPointer) {
        for frame in 0..<frames {
            for channel in 0..<channels { store(mono[frame], bytes, frame * channels + channel) }
        }
    }

    private func sample(_ bytes: UnsafeRawPointer, _ index: Int) -> Float {
        switch self {
        case .s16:
            return Float(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))) / 32_768
        case .s32:
            return Float(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))) / 2_147_483_648
        case .float:
            return Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
        case .s24:
            // The top byte is padding; shifting up and back extends the 24-bit sign.
            let word = Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))
            return Float((word << 8) >> 8) / 8_388_608
        case .s24Packed:
            let low = Int32(bytes.load(fromByteOffset: index * 3, as: UInt8.self))
            let middle = Int32(bytes.load(fromByteOffset: index * 3 + 1, as: UInt8.self))
            let high = Int32(Int8(bitPattern: bytes.load(fromByteOffset: index * 3 + 2, as: UInt8.self)))
            return Float(low | middle << 8 | high << 16) / 8_388_608
        }
    }

    private func store(_ value: Float, _ bytes: UnsafeMutableRawPointer, _ index: Int) {
        let clipped = value.isNaN ? 0 : max(-1, min(1, value))
        switch self {
        case .s16:
            bytes.storeBytes(of: int16(fromFloat: clipped).littleEndian, toByteOffset: index * 2, as: Int16.self)
        case .s32:
            let scaled = (Double(clipped) * 2_147_483_648).rounded()
            bytes.storeBytes(of: Int32(min(scaled, 2_147_483_647)).littleEndian, toByteOffset: index * 4, as: Int32.self)
        case .float:
            bytes.storeBytes(of: clipped.bitPattern.littleEndian, toByteOffset: index * 4, as: UInt32.self)
        case .s24:
            bytes.storeBytes(of: twentyFourBits(clipped).littleEndian, toByteOffset: index * 4, as: Int32.self)
        case .s24Packed:
            let value = twentyFourBits(clipped)
            bytes.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: index * 3, as: UInt8.self)
            bytes.storeBytes(of: UInt8(truncatingIfNeeded: value >> 8), toByteOffset: index * 3 + 1, as: UInt8.self)
            bytes.storeBytes(of: UInt8(truncatingIfNeeded: value >> 16), toByteOffset: index * 3 + 2, as: UInt8.self)
        }
    }

    private func twentyFourBits(_ clipped: Float) -> Int32 {
        Int32(min((clipped * 8_388_608).rounded(), 8_388_607))
    }
}
