/// Tuning of a `JitterBuffer`. All durations are in nanoseconds.
public struct JitterBufferConfiguration: Sendable, Equatable {
    /// The frame length assumed until the stream's own is learned.
    public var frameLength: FrameLength
    /// Lowest target delay.
    public var minimumDelay: UInt64
    /// Highest target delay; frames that would play later than this are dropped.
    public var maximumDelay: UInt64
    /// Frames of delay kept above the expected network delay while the stream's packets may
    /// carry FEC, so that the packet after a lost one is there to rebuild it. None while they
    /// are CELT-only (the low-delay path), which carry no FEC.
    public var marginFrames: Int
    /// Fraction of recent packets the target delay must absorb.
    public var delayQuantile: Double
    /// Width of the sliding window whose fastest packet defines "on time".
    public var arrivalWindow: UInt64
    /// How long the delay histogram remembers, counted in received media.
    public var delayHistoryTimeConstant: UInt64
    /// How fast a sudden delay peak is forgotten, counted in received media.
    public var peakDelayTimeConstant: UInt64
    /// How fast both are forgotten once arrivals are calm (the median delay of the last half
    /// second or so below a quarter of the budget, or their 90th percentile below 60 % of it):
    /// the link became clean, and its delay should follow. After two of these the late spell
    /// is forgotten.
    public var calmDelayTimeConstant: UInt64
    /// Longest run of concealment before switching to comfort silence.
    public var maximumConcealment: UInt64
    /// Most packets held; the oldest are dropped beyond it.
    public var capacity: Int
    /// Tuning of the playout rate controller that shrinks delay during speech and absorbs clock drift.
    public var rateControl: PlayoutRateController.Configuration

    /// Creates a configuration; see the properties for the meaning of each value.
    public init(
        frameLength: FrameLength = .milliseconds(10),
        minimumDelay: UInt64 = 0,
        maximumDelay: UInt64 = MediaTime.nanoseconds(.milliseconds(200)),
        marginFrames: Int = 1,
        delayQuantile: Double = 0.95,
        arrivalWindow: UInt64 = MediaTime.nanoseconds(.seconds(3)),
        delayHistoryTimeConstant: UInt64 = MediaTime.nanoseconds(.seconds(10)),
        peakDelayTimeConstant: UInt64 = MediaTime.nanoseconds(.seconds(4)),
        calmDelayTimeConstant: UInt64 = MediaTime.nanoseconds(.seconds(1)),
        maximumConcealment: UInt64 = MediaTime.nanoseconds(.milliseconds(100)),
        capacity: Int = 256,
        rateControl: PlayoutRateController.Configuration = PlayoutRateController.Configuration()
    ) {
        self.frameLength = frameLength
        self.minimumDelay = minimumDelay
        self.maximumDelay = maximumDelay
        self.marginFrames = marginFrames
        self.delayQuantile = delayQuantile
        self.arrivalWindow = arrivalWindow
        self.delayHistoryTimeConstant = delayHistoryTimeConstant
        self.peakDelayTimeConstant = peakDelayTimeConstant
        self.calmDelayTimeConstant = calmDelayTimeConstant
        self.maximumConcealment = maximumConcealment
        self.capacity = capacity
        self.rateControl = rateControl
    }
}
