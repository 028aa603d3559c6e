/// Turns the playout delay error into a slightly faster or slower playout rate (a PI controller).
///
/// This is how delay shrinks during speech and how sender/receiver clock drift is absorbed: the
/// integral term settles at the drift, the proportional term pulls the delay back to its target.
/// The ratio stays within ±`maximumDeviation` of 1, small enough to be inaudible.
///
/// Errors within ±`deadBand` count as none: the delay reading wobbles with the scheduling of
/// the threads that stamp arrivals and pull frames, and on a clean link between equal clocks
/// the ratio must stay at exactly 1 rather than resample the stream to chase that noise.
public struct PlayoutRateController: Sendable {
    /// Tuning of the controller; the defaults give a critically damped loop (time constant 20 s) that settles within about two minutes.
    public struct Configuration: Sendable, Equatable {
        /// Largest deviation of the ratio from 1 (0.005 = ±0.5 %).
        public var maximumDeviation: Double
        /// Ratio change per second of delay error.
        public var proportionalGain: Double
        /// Ratio change per second² of delay error integrated over time (the term that learns the clock drift).
        public var integralGain: Double
        /// Time constant of the low-pass filter on the delay error, in nanoseconds.
        public var smoothingTimeConstant: UInt64
        /// Smoothed delay error, either way, that the controller leaves alone, in nanoseconds.
        public var deadBand: UInt64

        /// Creates a configuration; see the properties for the meaning of each value.
        public init(
            maximumDeviation: Double = 0.005,
            proportionalGain: Double = 0.1,
            integralGain: Double = 0.0025,
            smoothingTimeConstant: UInt64 = MediaTime.nanoseconds(.milliseconds(500)),
            deadBand: UInt64 = MediaTime.nanoseconds(.milliseconds(1))
        ) {
            self.maximumDeviation = maximumDeviation
            self.proportionalGain = proportionalGain
            self.integralGain = integralGain
            self.smoothingTimeConstant = smoothingTimeConstant
            self.deadBand = deadBand
        }
    }

    /// Longest step integrated at once, so a pause in updates is not mistaken for a long error.
    private static let longestStep: UInt64 = MediaTime.nanoseconds(.milliseconds(100))

    private let configuration: Configuration
    private var smoothedError: Double = 0
    private var integral: Double = 0
    private var lastUpdate: UInt64?

    /// Source samples to consume per output sample: above 1 drains delay, below 1 builds it up.
    public private(set) var ratio: Double = 1

    /// Creates a controller at ratio 1.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Feeds the delay error (current − target, nanoseconds) measured at `now`, and updates `ratio`.
    public mutating func update(delayError: Int64, now: UInt64) {
        let step = lastUpdate.map { now > $0 ? min(now - $0, Self.longestStep) : 0 } ?? 0
        lastUpdate = now
        let seconds = MediaTime.seconds(nanoseconds: Double(step))
        let error = MediaTime.seconds(nanoseconds: Double(delayError))
        let smoothingSeconds = MediaTime.seconds(nanoseconds: Double(configuration.smoothingTimeConstant))
        smoothedError += (error - smoothedError) * seconds / (smoothingSeconds + seconds)

        let deadBand = MediaTime.seconds(nanoseconds: Double(configuration.deadBand))
        let outside = smoothedError > deadBand ? smoothedError - deadBand : smoothedError < -deadBand ? smoothedError + deadBand : 0
        let limit = configuration.maximumDeviation
        let proportional = configuration.proportionalGain * outside
        let integrated = integral + outside * seconds
        // Anti-windup: while the output is pinned at a limit, integrating further would only
        // build an overshoot (a large delay change is the proportional term's job, not drift).
        if abs(proportional + configuration.integralGain * integrated) <= limit || abs(integrated) < abs(integral) {
            integral = integrated
        }
        let deviation = proportional + configuration.integralGain * integral
        ratio = 1 + min(max(deviation, -limit), limit)
    }
}
