/// Converts a float sample in [-1, 1] to 16-bit PCM, clipping what lies outside.
@inlinable
public func int16(fromFloat sample: Float) -> Int16 {
    let scaled = (sample * 32768).rounded()
    return Int16(max(-32768, min(32767, scaled.isNaN ? 0 : scaled)))
}

/// Converts 16-bit PCM to a float sample in [-1, 1).
@inlinable
public func float(fromInt16 sample: Int16) -> Float { Float(sample) / 32768 }
