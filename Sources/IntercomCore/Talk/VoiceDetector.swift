import CSignalKernels
import Glibc

/// The voice detector behind VOX: a classifier on three features of each 10 ms of the
/// microphone, not a level rule.
///
/// - **periodicity**: the highest normalised correlation of the last 32 ms with itself one
///   pitch period earlier (2.5–16 ms, voices from 62 to 400 Hz), on the 200–1000 Hz band
///   taken down to 8 kHz. A talker's vowels repeat; a fan, keyboard clicks and clatter do not,
///   and six voices at once (babble) rarely line up.
/// - **level over the noise**: the band's energy in the last 10 ms against a slowly followed
///   noise level (the mean in dB of every frame, rising 0.5 % and falling 2 % of the difference
///   a frame). The near talker stands out of a background; one voice of a babble does not.
/// - **low-band share**: the 200–1000 Hz band's share of all the frame's energy. A vowel's
///   energy is mostly there; a key click's ring (1.1–5 kHz) and a pan's are above it.
///
/// Each feature gives a score `½ + ½·z / (1 + |z|)` with `z = 1.5 + slope·(value − threshold)`:
/// 0.8 at its threshold, and the frame's speech probability is the lowest of the three: at the default
/// VOX threshold of 80 % a frame is voiced when its periodicity is at least 0.6, its level
/// 10 dB over the noise and its low-band share at least −4 dB; a higher threshold asks more
/// of all three. A voice starts when three of the last four frames are voiced.
///
/// The thresholds were chosen in the acoustic lab (`scripts/lab/acoustic`: fan, babble and
/// keyboard noise alone, and ten short words in each at 10 dB SNR); see
/// Docs/acoustic-lab.md. They were chosen on 48 kHz audio; the microphone's chain now feeds
/// the detector its 16 kHz speech band (`SpeechBand`), where the low band's share is of the
/// energy below 8 kHz alone, and the lab's figures came out the same (no second sent in a
/// minute of fan, babble or keyboard noise, no onset of ten clipped). Nothing is allocated
/// after `init`: it runs on the capture thread.
public struct VoiceDetector: Sendable {
    /// One 10 ms frame's features and verdict.
    public struct Frame: Sendable, Equatable {
        public var periodicity: Float = 0
        public var levelOverNoiseDB: Float = 0
        public var lowBandShareDB: Float = -100
        /// 0...100.
        public var probability = 0
        /// The frame's own verdict (its probability reached the threshold).
        public var voiced = false
        /// Whether a voice is going on: three of the last four frames voiced.
        public var speech = false

        /// Neither voiced nor standing above the noise: a pause between words, which VOX's
        /// pre-roll may drop to take its delay out (`PrerollLine`).
        public var isPause: Bool { !voiced && levelOverNoiseDB < VoiceDetector.pauseOverNoiseDB }
    }

    public static let periodicityThreshold: Float = 0.6
    public static let levelThresholdDB: Float = 10
    /// The speech band less than this above the noise (and not voiced) is a pause.
    public static let pauseOverNoiseDB: Float = 3
    public static let lowBandShareThresholdDB: Float = -4

    /// Percent of speech probability a voiced frame needs (the VOX threshold).
    public var threshold: Int

    private static let window = 256
    private static let shortestLag = 20
    private static let longestLag = 128
    private static let history = window + longestLag
    /// The band's new samples a frame: 10 ms at 8 kHz.
    private static let newPerFrame = 80
    /// 10 ms at the rate the detector is fed, and what takes that rate down to the band's 8 kHz.
    public let frameSamples: Int
    private let decimation: Int

    private var highPass: Biquad
    private var lowPass: Biquad
    /// The band at 8 kHz: the last `history` samples, oldest first.
    private var band: [Float]
    private var filled = 0
    private var phase = 0
    private var fresh = 0
    private var frameEnergy: Double = 0
    private var bandEnergy: Double = 0
    private var noiseDB: Float?
    /// The last four frames' verdicts, as bits.
    private var recent: UInt8 = 0
    /// The last complete frame.
    public private(set) var last = Frame()

    /// A detector fed audio at `sampleRate`: 48 kHz, or the 16 kHz the microphone's cleaning
    /// runs at (a multiple of 8 kHz).
    public init(threshold: Int = 80, sampleRate: Int = 48_000) {
        precondition(sampleRate % 8_000 == 0, "the detector's band is taken down to 8 kHz")
        self.threshold = threshold
        decimation = sampleRate / 8_000
        frameSamples = Self.newPerFrame * decimation
        highPass = Biquad.highPass(cutoff: 200, rate: Float(sampleRate))
        lowPass = Biquad.lowPass(cutoff: 1_000, rate: Float(sampleRate))
        band = [Float](repeating: 0, count: Self.history + Self.newPerFrame)
    }

    /// Feeds samples (any count) at its rate; returns whether a voice is going on as of
    /// the last complete 10 ms frame.
    public mutating func analyse(_ samples: UnsafeBufferPointer<Int16>) -> Bool {
        for sample in samples {
            let x = Float(sample) / 32_768
            let y = lowPass.process(highPass.process(x))
            frameEnergy += Double(x * x)
            bandEnergy += Double(y * y)
            if phase == 0 {
                band[Self.history + fresh] = y
                fresh += 1
            }
            phase = (phase + 1) % decimation
            if fresh == Self.newPerFrame && phase == 0 { finishFrame() }
        }
        return last.speech
    }

    private mutating func finishFrame() {
        // Move the new samples in at the end of the history.
        band.withUnsafeMutableBufferPointer { b in
            for i in 0..<Self.history { b[i] = b[i + Self.newPerFrame] }
        }
        fresh = 0
        filled = min(Self.history, filled + Self.newPerFrame)
        var frame = Frame()
        let energyDB = Self.decibels(bandEnergy / Double(frameSamples) + 1e-12)
        frame.lowBandShareDB = Self.decibels((bandEnergy + 1e-12) / (frameEnergy + 1e-12))
        if let noise = noiseDB {
            frame.levelOverNoiseDB = energyDB - noise
            noiseDB = noise + (energyDB - noise) * (energyDB > noise ? 0.005 : 0.02)
        } else {
            noiseDB = energyDB
        }
        frameEnergy = 0
        bandEnergy = 0
        if filled == Self.history { frame.periodicity = periodicity() }
        let score = min(
            Self.score(frame.periodicity - Self.periodicityThreshold, slope: 20),
            Self.score(frame.levelOverNoiseDB - Self.levelThresholdDB, slope: 1),
            Self.score(frame.lowBandShareDB - Self.lowBandShareThresholdDB, slope: 1)
        )
        frame.probability = Int((score * 100).rounded())
        frame.voiced = frame.probability >= threshold
        recent = (recent << 1 | (frame.voiced ? 1 : 0)) & 0b1111
        frame.speech = recent.nonzeroBitCount >= 3
        last = frame
    }

    /// 0.8 where `excess` is 0, towards 1 above and 0 below.
    private static func score(_ excess: Float, slope: Float) -> Float {
        let z = 1.5 + slope * excess
        return 0.5 + 0.5 * z / (1 + abs(z))
    }

    /// 10·log10(x), -200 for x ≤ 0.
    static func decibels(_ x: Double) -> Float {
        x > 0 ? Float(10 * log10(x)) : -200
    }

    /// The highest normalised correlation of the last `window` samples with the same span
    /// `shortestLag…longestLag` samples earlier.
    private func periodicity() -> Float {
        band.withUnsafeBufferPointer { b in
            // The sums are the C kernel's dot products (eight lanes at a time: a Swift loop
            // keeps a float sum's order and adds one at a time).
            let start = Self.history - Self.window
            let window = Int32(Self.window)
            let recent = b.baseAddress! + start
            let current = intercom_dot(recent, recent, window)
            guard current > 1e-9 else { return 0 }
            var earlier = intercom_dot(recent - Self.shortestLag, recent - Self.shortestLag, window)
            var best: Float = 0
            for lag in Self.shortestLag...Self.longestLag {
                if lag > Self.shortestLag {
                    // Slide the earlier span back by one sample.
                    let entering = b[start - lag]
                    let leaving = b[Self.history - lag]
                    earlier = max(0, earlier + entering * entering - leaving * leaving)
                }
                let product = intercom_dot(recent, recent - lag, window)
                let correlation = product / (current * earlier).squareRoot().clamped(atLeast: 1e-12)
                if correlation > best { best = correlation }
            }
            return best
        }
    }
}

/// A second-order section (RBJ's cookbook, Q = 1/√2), at 48 kHz unless told.
struct Biquad: Sendable {
    private let b0, b1, b2, a1, a2: Float
    private var z1: Float = 0
    private var z2: Float = 0

    private init(b0: Float, b1: Float, b2: Float, a0: Float, a1: Float, a2: Float) {
        self.b0 = b0 / a0
        self.b1 = b1 / a0
        self.b2 = b2 / a0
        self.a1 = a1 / a0
        self.a2 = a2 / a0
    }

    static func lowPass(cutoff: Float, rate: Float = 48_000) -> Biquad {
        let (cosine, alpha) = parts(cutoff: cutoff, rate: rate)
        return Biquad(b0: (1 - cosine) / 2, b1: 1 - cosine, b2: (1 - cosine) / 2, a0: 1 + alpha, a1: -2 * cosine, a2: 1 - alpha)
    }

    static func highPass(cutoff: Float, rate: Float = 48_000) -> Biquad {
        let (cosine, alpha) = parts(cutoff: cutoff, rate: rate)
        return Biquad(b0: (1 + cosine) / 2, b1: -(1 + cosine), b2: (1 + cosine) / 2, a0: 1 + alpha, a1: -2 * cosine, a2: 1 - alpha)
    }

    private static func parts(cutoff: Float, rate: Float) -> (cosine: Float, alpha: Float) {
        let w = 2 * Float.pi * cutoff / rate
        return (cos(w), sin(w) / Float(2).squareRoot())
    }

    /// Transposed direct form II.
    mutating func process(_ x: Float) -> Float {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }
}

extension Float {
    fileprivate func clamped(atLeast floor: Float) -> Float { Swift.max(self, floor) }
}
