/// Finds where a known signal reappears in a recording: the lag at which the two correlate
/// best. Used to measure delay from audio alone (the loopback demo, tests, benchmarks).
public enum SignalAlignment {
    /// The lag (samples by which `output` is later than `input`) within `lags` at which the
    /// first `window` samples of `input` correlate best with `output`, and that correlation.
    public static func bestLag(
        of input: [Float], in output: [Float], lags: ClosedRange<Int>, window: Int? = nil
    ) -> (lag: Int, correlation: Double) {
        let length = min(window ?? input.count, input.count)
        // The level envelopes (1 ms blocks) find the lag to within a couple of blocks for a
        // fraction of the work; the samples then pin it down. Where that match is poor (mixed
        // or damaged signals), every lag is searched.
        if lags.count > 8 * envelopeBlock, let near = envelopeLag(of: input, in: output, lags: lags, length: length) {
            let around = max(lags.lowerBound, near - 2 * envelopeBlock)...min(lags.upperBound, near + 2 * envelopeBlock)
            let refined = sampleLag(of: input, in: output, lags: around, length: length)
            if refined.correlation >= 0.5 { return refined }
        }
        return sampleLag(of: input, in: output, lags: lags, length: length)
    }

    private static let envelopeBlock = 48

    /// Mean magnitude per block of `envelopeBlock` samples.
    private static func envelope(_ samples: ArraySlice<Float>) -> [Float] {
        let blocks = samples.count / envelopeBlock
        return (0..<blocks).map { index in
            let start = samples.startIndex + index * envelopeBlock
            var sum: Float = 0
            for sample in samples[start..<(start + envelopeBlock)] { sum += abs(sample) }
            return sum / Float(envelopeBlock)
        }
    }

    /// The lag, to a block, at which the envelopes correlate best; nil without enough overlap.
    private static func envelopeLag(of input: [Float], in output: [Float], lags: ClosedRange<Int>, length: Int) -> Int? {
        let inputEnvelope = envelope(input[0..<length])
        let outputEnvelope = envelope(output[...])
        let first = Int((Double(lags.lowerBound) / Double(envelopeBlock)).rounded(.down))
        let last = Int((Double(lags.upperBound) / Double(envelopeBlock)).rounded(.up))
        var best: (lag: Int, correlation: Double)?
        for blockLag in first...last {
            let c = correlation(lag: blockLag, input: inputEnvelope, output: outputEnvelope, length: inputEnvelope.count)
            if c > (best?.correlation ?? -1) { best = (blockLag * envelopeBlock, c) }
        }
        return best.map { min(lags.upperBound, max(lags.lowerBound, $0.lag)) }
    }

    private static func sampleLag(
        of input: [Float], in output: [Float], lags: ClosedRange<Int>, length: Int
    ) -> (lag: Int, correlation: Double) {
        // Coarse search on a decimated grid, then every lag around the best coarse one.
        let step = 8
        var best = (lag: lags.lowerBound, correlation: -2.0)
        for lag in stride(from: lags.lowerBound, through: lags.upperBound, by: step) {
            let c = correlation(lag: lag, input: input, output: output, length: length, stride: 4)
            if c > best.correlation { best = (lag, c) }
        }
        let fine = max(lags.lowerBound, best.lag - step)...min(lags.upperBound, best.lag + step)
        best.correlation = -2
        for lag in fine {
            let c = correlation(lag: lag, input: input, output: output, length: length, stride: 1)
            if c > best.correlation { best = (lag, c) }
        }
        return best
    }

    /// Pearson correlation of `input[i]` with `output[i + lag]` over the overlap.
    public static func correlation(lag: Int, input: [Float], output: [Float], length: Int, stride: Int = 1) -> Double {
        let start = max(0, -lag)
        let end = min(length, output.count - lag)
        guard end - start > 16 else { return -1 }
        var sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0, n = 0.0
        for i in Swift.stride(from: start, to: end, by: stride) {
            let x = Double(input[i]), y = Double(output[i + lag])
            sa += x; sb += y; saa += x * x; sbb += y * y; sab += x * y; n += 1
        }
        let covariance = sab - sa * sb / n
        let varianceA = saa - sa * sa / n
        let varianceB = sbb - sb * sb / n
        guard varianceA > 0, varianceB > 0 else { return 0 }
        return covariance / (varianceA * varianceB).squareRoot()
    }

    /// One window of `input` and where it was found in `output`.
    public struct WindowMatch: Equatable, Sendable {
        public let inputStart: Int
        public let lag: Int
        public let correlation: Double
    }

    /// Aligns `input` window by window, each searched within `search` samples of `around`,
    /// so that a delay that changes during the recording (a jitter buffer adapting, clock
    /// drift being corrected) is followed. Windows of near-silence are skipped.
    public static func windowedMatches(
        of input: [Float], in output: [Float], around: Int, search: Int, window: Int = 24_000, minimumRMS: Double = 0.01
    ) -> [WindowMatch] {
        var matches: [WindowMatch] = []
        var expected = around
        for start in stride(from: 0, to: input.count - window + 1, by: window) {
            let slice = Array(input[start..<(start + window)])
            let rms = (slice.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)).squareRoot()
            guard rms >= minimumRMS else { continue }
            let shifted = Array(output[min(output.count, max(0, start))...])
            let lags = max(-start, expected - search)...(expected + search)
            guard lags.lowerBound <= lags.upperBound else { continue }
            let best = bestLag(of: slice, in: shifted, lags: lags)
            matches.append(WindowMatch(inputStart: start, lag: best.lag, correlation: best.correlation))
            expected = best.lag
        }
        return matches
    }
}
