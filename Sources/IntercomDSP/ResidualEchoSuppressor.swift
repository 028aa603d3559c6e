import CKissFFT
import Glibc
import IntercomCore

/// Holds down the echo SpeexDSP's canceller leaves while it learns a path: the first seconds
/// of a call, and after the path changes (a lid moved, the laptop turned). SpeexDSP's own
/// residual echo suppression follows the canceller's estimate of what leaks through its filter,
/// which is smallest just when the path has changed, so a moved path took 2.25 s to come back
/// (Docs/acoustic-lab.md, "How fast the canceller learns a changed path"). This suppressor
/// judges the echo from the signals instead: per frequency bin, how coherent the cleaned
/// microphone is with the far end the canceller was given, a few hops after the echo's delay
/// (`ResidualEchoGains` turns that into gains). The far end's spectra are taken at two phases,
/// half a hop apart: an echo that falls between the hops' windows is seen at about half the
/// coherence it has with a window in step with it, and the lab's rooms then came back from a
/// moved path in 1.75 s instead of 0.25.
///
/// It runs after the whole cleaning chain on blocks of `hopSamples`. Spectra come from 2-hop
/// windows; the gains are applied by overlap-add with windows made for low delay (an analysis
/// window whose fall takes only `crossfadeSamples`, a synthesis window that covers the last hop
/// and the crossfade): the output lags its input by `crossfadeSamples` (1 ms) where symmetric
/// windows of the same length would cost a whole hop. Allocates nothing after `init`.
public final class ResidualEchoSuppressor {
    public let hopSamples: Int
    public let windowSamples: Int
    /// The delay the suppressor adds to what passes through it.
    public let crossfadeSamples: Int
    /// How many hops after the echo's delay the far end is looked for (early reflections).
    static let lags = 4
    /// The far end's windows per hop, evenly spaced within it.
    static let phases = 2
    /// Each hop's share of the smoothed spectra: 0.97 keeps about 30 hops (150 ms at 5 ms hops).
    static let smoothing: Float = 0.97

    private let fft: RealFFT
    private let binCount: Int
    private var gains: ResidualEchoGains
    private let phaseOffset: Int
    private let ringHops: Int
    private var newestRow = 0
    private var crossEchoHops = -1
    /// Hops in a row whose far end was silent (`SilentFarEnd`: nobody talking to us, nothing to
    /// echo); once every row of the ring is silent and no band is held down, the signal only
    /// passes through, 1 ms later, with none of the spectra computed.
    private var silentReferenceHops = 0
    private var passingThrough = false
    /// Hops left before the spectra smoothed since the start (or since the far end spoke
    /// again) are judged: an average of a few hops reads as coherent whatever the signals are
    /// (of one hop, always 1).
    private var warmUpHops = ResidualEchoSuppressor.warmUp
    /// Enough hops for an estimate of incoherent signals to read well under the bias.
    static let warmUp = 8
    /// Windows, histories, spectra and smoothed figures in buffers of their own (the inner
    /// loops run on them without Swift arrays' checks), allocated at `init`, freed at `deinit`.
    private let analysisWindow: UnsafeMutableBufferPointer<Float>
    private let synthesisWindow: UnsafeMutableBufferPointer<Float>
    /// The last window's samples of the signal, and of the far end with the phases' offsets, oldest first.
    private let signalHistory: UnsafeMutableBufferPointer<Float>
    private let referenceHistory: UnsafeMutableBufferPointer<Float>
    /// The far end's spectra and their smoothed power, one row of `phases` spectra per hop, in a ring.
    private let referenceSpectra: UnsafeMutableBufferPointer<kiss_fft_cpx>
    private let referencePower: UnsafeMutableBufferPointer<Float>
    private let signalSpectrum: UnsafeMutableBufferPointer<kiss_fft_cpx>
    private let signalPower: UnsafeMutableBufferPointer<Float>
    /// The smoothed cross spectrum of the signal with the far end at each phase and lag.
    private let cross: UnsafeMutableBufferPointer<kiss_fft_cpx>
    private let coherence: UnsafeMutableBufferPointer<Float>
    private let binGains: UnsafeMutableBufferPointer<Float>
    private let frame: UnsafeMutableBufferPointer<Float>
    private let pending: UnsafeMutableBufferPointer<Float>

    /// For blocks of `hopSamples`, an echo up to `maximumEchoDelaySamples` behind the far end
    /// it is given with.
    public init(hopSamples: Int, maximumEchoDelaySamples: Int, crossfadeSamples: Int) throws(FFTError) {
        precondition(hopSamples > 0 && crossfadeSamples > 0 && crossfadeSamples < hopSamples)
        self.hopSamples = hopSamples
        windowSamples = 2 * hopSamples
        self.crossfadeSamples = crossfadeSamples
        fft = try RealFFT(length: windowSamples)
        binCount = fft.binCount
        gains = ResidualEchoGains(binCount: binCount)
        phaseOffset = hopSamples / Self.phases
        ringHops = maximumEchoDelaySamples / hopSamples + Self.lags + 1
        func zeros<T>(_ count: Int, _ zero: T) -> UnsafeMutableBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: count)
            buffer.initialize(repeating: zero)
            return buffer
        }
        let (analysis, synthesis) = Self.windows(length: windowSamples, hop: hopSamples, crossfade: crossfadeSamples)
        analysisWindow = zeros(windowSamples, 0)
        _ = analysisWindow.update(fromContentsOf: analysis)
        synthesisWindow = zeros(windowSamples, 0)
        _ = synthesisWindow.update(fromContentsOf: synthesis)
        signalHistory = zeros(windowSamples, 0)
        referenceHistory = zeros(windowSamples + (Self.phases - 1) * phaseOffset, 0)
        let none = kiss_fft_cpx(r: 0, i: 0)
        referenceSpectra = zeros(ringHops * Self.phases * binCount, none)
        referencePower = zeros(ringHops * Self.phases * binCount, 0)
        signalSpectrum = zeros(binCount, none)
        signalPower = zeros(binCount, 0)
        cross = zeros(Self.phases * Self.lags * binCount, none)
        coherence = zeros(binCount, 0)
        binGains = zeros(binCount, 1)
        frame = zeros(windowSamples, 0)
        pending = zeros(crossfadeSamples, 0)
    }

    deinit {
        for buffer in [analysisWindow, synthesisWindow, signalHistory, referenceHistory, referencePower, signalPower,
                       coherence, binGains, frame, pending] { buffer.deallocate() }
        for buffer in [referenceSpectra, signalSpectrum, cross] { buffer.deallocate() }
    }

    /// Analysis and synthesis windows whose product over the window's last hop and crossfade
    /// rises over the crossfade, stays at 1 and falls over the crossfade, so that hops overlap
    /// by `crossfade` samples and add up to the input.
    static func windows(length: Int, hop: Int, crossfade: Int) -> ([Float], [Float]) {
        let ramp = (0..<crossfade).map { index in
            let s = sinf(0.5 * .pi * (Float(index) + 0.5) / Float(crossfade))
            return s * s
        }
        var product = [Float](repeating: 0, count: length)
        for index in 0..<crossfade {
            product[length - hop - crossfade + index] = ramp[index]
            product[length - crossfade + index] = ramp[crossfade - 1 - index]
        }
        for index in (length - hop)..<(length - crossfade) { product[index] = 1 }
        let rising = length - crossfade
        var analysis = (0..<rising).map { sinf(.pi * Float($0) / Float(2 * rising)) }
        analysis += (0..<crossfade).map { ramp[crossfade - 1 - $0].squareRoot() }
        let synthesis = (0..<length).map { product[$0] > 0 ? product[$0] / max(analysis[$0], 1e-9) : 0 }
        return (analysis, synthesis)
    }

    /// Suppresses in `block` (`hopSamples`, in place; what comes out lags by
    /// `crossfadeSamples`) the echo of `reference`, the far end the canceller was given with the
    /// microphone's block; the echo is `echoDelaySamples` behind it.
    public func process(_ block: UnsafeMutableBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>,
                        echoDelaySamples: Int) {
        precondition(block.count == hopSamples && reference.count == hopSamples)
        Self.shift(signalHistory, adding: UnsafeBufferPointer(block))
        Self.shift(referenceHistory, adding: reference)
        let silent = SilentFarEnd.holds(reference)
        silentReferenceHops = silent ? silentReferenceHops + 1 : 0
        if passingThrough {
            if silent {
                passThrough(into: block)
                return
            }
            resume()
        }
        newestRow = (newestRow + 1) % ringHops
        analyseReference()
        analyse(signalHistory, endingBefore: 0, into: signalSpectrum.baseAddress!, power: signalPower.baseAddress!,
                previousPower: signalPower.baseAddress!)
        let echoHops = min(max(0, echoDelaySamples / hopSamples), ringHops - Self.lags)
        if echoHops != crossEchoHops {
            // The far end's rows now meet other hops of the signal: what was accumulated no longer fits.
            cross.update(repeating: kiss_fft_cpx(r: 0, i: 0))
            crossEchoHops = echoHops
        }
        followCoherence(echoHops: echoHops)
        if warmUpHops > 0 {
            warmUpHops -= 1
            coherence.update(repeating: 0)
        }
        gains.update(coherence: UnsafeBufferPointer(coherence), gains: binGains)
        synthesise(into: block)
        passingThrough = silentReferenceHops >= ringHops && gains.passesAll
    }

    /// The signal 1 ms later, as the overlap-add gives it with every gain at 1 (the crossfade's
    /// tail kept as it would be, for the hop the far end speaks again).
    private func passThrough(into block: UnsafeMutableBufferPointer<Int16>) {
        let start = windowSamples - hopSamples - crossfadeSamples
        for index in 0..<hopSamples {
            block[index] = Int16(clamping: Int((signalHistory[start + index] * 32768).rounded()))
        }
        for index in 0..<crossfadeSamples {
            let position = windowSamples - crossfadeSamples + index
            pending[index] = signalHistory[position] * analysisWindow[position] * synthesisWindow[position] * 32768
        }
    }

    /// The far end speaks again after a silence: what was smoothed before it is long stale.
    private func resume() {
        passingThrough = false
        referenceSpectra.update(repeating: kiss_fft_cpx(r: 0, i: 0))
        referencePower.update(repeating: 0)
        signalPower.update(repeating: 0)
        cross.update(repeating: kiss_fft_cpx(r: 0, i: 0))
        warmUpHops = Self.warmUp
    }

    private static func shift(_ history: UnsafeMutableBufferPointer<Float>, adding block: UnsafeBufferPointer<Int16>) {
        let hop = block.count, kept = history.count - hop
        for index in 0..<kept { history[index] = history[index + hop] }
        for index in 0..<hop { history[kept + index] = Float(block[index]) * (1.0 / 32768) }
    }

    /// The spectrum of the window of `history` that ends `end` samples before its last, and its
    /// power smoothed from `previousPower`.
    private func analyse(_ history: UnsafeMutableBufferPointer<Float>, endingBefore end: Int,
                         into spectrum: UnsafeMutablePointer<kiss_fft_cpx>, power: UnsafeMutablePointer<Float>,
                         previousPower: UnsafePointer<Float>) {
        let start = history.count - end - windowSamples
        for index in 0..<windowSamples { frame[index] = history[start + index] * analysisWindow[index] }
        fft.forward(frame.baseAddress!, into: spectrum)
        let keep = Self.smoothing
        for bin in 0..<binCount {
            let value = spectrum[bin]
            power[bin] = keep * previousPower[bin] + (1 - keep) * (value.r * value.r + value.i * value.i)
        }
    }

    private func analyseReference() {
        let previousRow = (newestRow + ringHops - 1) % ringHops
        for phase in 0..<Self.phases {
            let row = (newestRow * Self.phases + phase) * binCount
            let previous = (previousRow * Self.phases + phase) * binCount
            analyse(referenceHistory, endingBefore: phase * phaseOffset, into: referenceSpectra.baseAddress! + row,
                    power: referencePower.baseAddress! + row, previousPower: referencePower.baseAddress! + previous)
        }
    }

    /// Each bin's coherence with the far end: the best of the phases and lags after the echo's delay.
    private func followCoherence(echoHops: Int) {
        let keep = Self.smoothing, fresh = 1 - keep
        coherence.update(repeating: 0)
        for phase in 0..<Self.phases {
            for lag in 0..<Self.lags {
                let row = (((newestRow - echoHops - lag + 2 * ringHops) % ringHops) * Self.phases + phase) * binCount
                let far = referenceSpectra.baseAddress! + row, farPower = referencePower.baseAddress! + row
                let accumulated = cross.baseAddress! + (phase * Self.lags + lag) * binCount
                for bin in 0..<binCount {
                    let signal = signalSpectrum[bin], x = far[bin]
                    // signal × conj(far)
                    let r = keep * accumulated[bin].r + fresh * (signal.r * x.r + signal.i * x.i)
                    let i = keep * accumulated[bin].i + fresh * (signal.i * x.r - signal.r * x.i)
                    accumulated[bin] = kiss_fft_cpx(r: r, i: i)
                    let value = (r * r + i * i) / (signalPower[bin] * farPower[bin] + 1e-24)
                    coherence[bin] = max(coherence[bin], min(1, value))
                }
            }
        }
    }

    private func synthesise(into block: UnsafeMutableBufferPointer<Int16>) {
        for bin in 0..<binCount {
            signalSpectrum[bin].r *= binGains[bin]
            signalSpectrum[bin].i *= binGains[bin]
        }
        fft.inverse(signalSpectrum.baseAddress!, into: frame.baseAddress!)
        // kissfft's inverse is not divided by the length; the output is scaled back to 16 bits here too.
        let scale = 32768 / Float(windowSamples)
        let start = windowSamples - hopSamples - crossfadeSamples
        for index in 0..<hopSamples {
            var value = frame[start + index] * synthesisWindow[start + index] * scale
            if index < crossfadeSamples { value += pending[index] }
            block[index] = Int16(clamping: Int(value.rounded()))
        }
        for index in 0..<crossfadeSamples {
            let position = windowSamples - crossfadeSamples + index
            pending[index] = frame[position] * synthesisWindow[position] * scale
        }
    }
}
