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

    /// How alike two aligned speech signals sound, insensitive to phase: the mean, over
    /// octave bands from 250 Hz to 8 kHz, of the correlation between the two signals' level
    /// envelopes (dB per 10 ms block, over blocks where `reference` speaks). Filters that only
    /// shift phase (an echo canceller's DC notch, a codec's high-pass) leave it near 1; gaps,
    /// noise and garbling lower it, as they lower intelligibility measures such as STOI.
    public static func envelopeCorrelation(_ reference: ArraySlice<Float>, _ test: ArraySlice<Float>, sampleRate: Double = 48_000) -> Double {
        let count = min(reference.count, test.count)
        let block = Int(sampleRate / 100)
        let spoken = blockRMS(Array(reference.prefix(count)), block: block).map { $0 > 0.01 }
        return envelopeCorrelation(reference, test, over: spoken, sampleRate: sampleRate)
    }

    /// `envelopeCorrelation` over the blocks where `test` is heard at all, and the share of the
    /// blocks where `reference` speaks that `test` drops out (below −80 dBFS: the digital
    /// silence of a speaker's underrun or a stalled machine, not a level change a listener
    /// hears). One dropout of a fifth of a second in a sentence, 100 dB below the speech in
    /// the dB envelope, would outweigh everything else the correlation sees; apart, the two
    /// say which went wrong: the sound, or its arrival.
    public static func envelopeCorrelationAndDropouts(
        _ reference: ArraySlice<Float>, _ test: ArraySlice<Float>, sampleRate: Double = 48_000
    ) -> (correlation: Double, dropouts: Double) {
        let count = min(reference.count, test.count)
        let block = Int(sampleRate / 100)
        let spoken = blockRMS(Array(reference.prefix(count)), block: block).map { $0 > 0.01 }
        let heard = blockRMS(Array(test.prefix(count)), block: block).map { $0 > 1e-4 }
        let dropped = zip(spoken, heard).filter { $0 && !$1 }.count
        let spokenCount = spoken.filter { $0 }.count
        let correlation = envelopeCorrelation(reference, test, over: zip(spoken, heard).map { $0 && $1 }, sampleRate: sampleRate)
        return (correlation, spokenCount == 0 ? 0 : Double(dropped) / Double(spokenCount))
    }

    /// The envelope correlation over the 10 ms blocks marked in `kept`.
    private static func envelopeCorrelation(
        _ reference: ArraySlice<Float>, _ test: ArraySlice<Float>, over kept: [Bool], sampleRate: Double
    ) -> Double {
        let count = min(reference.count, test.count)
        let block = Int(sampleRate / 100)
        let centres: [Double] = [250, 500, 1_000, 2_000, 4_000, 8_000]
        let correlations = centres.map { centre -> Double in
            let levels = [reference, test].map { signal in
                blockRMS(bandPassed(Array(signal.prefix(count)), centre: centre, sampleRate: sampleRate), block: block)
                    .map { Float(20 * log10(max($0, 1e-5))) }
            }
            let series = levels.map { series in ArraySlice(zip(series, kept).filter(\.1).map(\.0)) }
            return correlation(series[0], series[1])
        }
        return correlations.reduce(0, +) / Double(correlations.count)
    }

    /// `x` through a one-octave band-pass filter (a biquad, applied twice) around `centre` Hz.
    public static func bandPassed(_ x: [Float], centre: Double, sampleRate: Double = 48_000) -> [Float] {
        // Audio EQ Cookbook band-pass, constant 0 dB peak gain; Q of one octave is about 1.41.
        let omega = 2 * Double.pi * centre / sampleRate
        let alpha = sin(omega) / (2 * 1.41)
        let a0 = 1 + alpha
        let (b0, b2) = (alpha / a0, -alpha / a0)
        let (a1, a2) = (-2 * cos(omega) / a0, (1 - alpha) / a0)
        var y = x
        for _ in 0..<2 {
            var (x1, x2, y1, y2) = (0.0, 0.0, 0.0, 0.0)
            for i in y.indices {
                let input = Double(y[i])
                let output = b0 * input + b2 * x2 - a1 * y1 - a2 * y2
                (x2, x1, y2, y1) = (x1, input, y1, output)
                y[i] = Float(output)
            }
        }
        return y
    }

    /// Root mean square of `x` in consecutive blocks.
    public static func blockRMS(_ x: [Float], block: Int) -> [Double] {
        stride(from: 0, to: x.count - block + 1, by: block).map { rms(x[$0..<($0 + block)]) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
