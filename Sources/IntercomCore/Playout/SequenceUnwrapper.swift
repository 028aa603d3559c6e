/// Extends wrapping RTP counters (16-bit sequence numbers, 32-bit timestamps) to comparable `Int64` values.
///
/// Each value is placed at the unwrapped candidate nearest to the previous one, so reordering
/// across a wraparound (65535, 1, 0, 2) still comes out as increasing numbers (65535, 65537, 65536, 65538).
public struct SequenceUnwrapper<Counter: FixedWidthInteger & UnsignedInteger>: Sendable {
    private var previous: Int64?

    /// Creates an unwrapper that has seen no value yet.
    public init() {}

    /// Returns `value` extended to 64 bits, nearest to the previously unwrapped value.
    public mutating func unwrap(_ value: Counter) -> Int64 {
        let raw = Int64(value)
        guard let previous else {
            self.previous = raw
            return raw
        }
        let modulus = Int64(1) << Counter.bitWidth
        // Distance from the previous value's position in the counter, folded into [-modulus/2, modulus/2).
        var step = (raw - previous) % modulus
        if step < 0 { step += modulus }
        if step >= modulus / 2 { step -= modulus }
        let unwrapped = previous + step
        self.previous = unwrapped
        return unwrapped
    }
}
