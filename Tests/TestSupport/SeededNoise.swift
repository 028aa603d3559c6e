import IntercomCore

/// Reproducible white noise for tests.
public struct SeededNoise {
    private var generator: SeededGenerator

    public init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    public mutating func next() -> UInt64 { generator.next() }

    /// Uniform in [-1, 1).
    public mutating func sample() -> Float {
        Float(Double(next() >> 11) / Double(1 << 53) * 2 - 1)
    }

    public mutating func samples(_ count: Int, amplitude: Float) -> [Float] {
        (0..<count).map { _ in sample() * amplitude }
    }
}
