import IntercomCore

/// Measures on sampled signals, for assertions about audio.
public enum SignalMeasures {
    public static func rms(_ x: some Collection<Float>) -> Double {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    public static func energy(_ x: some Collection<Float>) -> Double {
        x.reduce(0.0) { $0 + Double($1) * Double($1) }
    }

    /// Ratio of two energies in decibels.
    public static func decibels(_ numerator: Double, over denominator: Double) -> Double {
        10 * log10(max(numerator, 1e-20) / max(denominator, 1e-20))
    }

    /// Pearson correlation of two equally long signals.
    public static func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        let n = min(a.count, b.count)
        guard n > 1 else { return 0 }
        var sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0
        for (x, y) in zip(a.prefix(n), b.prefix(n)) {
            let (x, y) = (Double(x), Double(y))
            sa += x; sb += y; saa += x * x; sbb += y * y; sab += x * y
        }
        let count = Double(n)
        let cov = sab - sa * sb / count
        let va = saa - sa * sa / count
        let vb = sbb - sb * sb / count
        guard va > 0, vb > 0 else { return 0 }
        return cov / (va * vb).squareRoot()
    }

    /// The lag (in samples, `output` later than `input`) in `lags` where they correlate best.
    public static func bestAlignment(
        of input: [Float], in output: [Float], lags: ClosedRange<Int>, window: Int? = nil
    ) -> (lag: Int, correlation: Double) {
        SignalAlignment.bestLag(of: input, in: output, lags: lags, window: window)
    }

    /// Root mean square of `x` in consecutive blocks.
    public static func blockRMS(_ x: [Float], block: Int) -> [Double] {
        stride(from: 0, to: x.count - block + 1, by: block).map { rms(x[$0..<($0 + block)]) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
