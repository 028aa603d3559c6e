/// Counters and delay measures of one received stream.
public struct JitterBufferStatistics: Sendable, Equatable {
    /// Distinct packets that arrived, including late ones (duplicates excluded).
    public var received: Int = 0
    /// Packets never received: expected (sequence-number span) minus received, as in RFC 3550.
    public var lost: Int = 0
    /// Frames rebuilt from the next packet's in-band FEC.
    public var recoveredByFEC: Int = 0
    /// Frames rendered by packet-loss concealment (losses and delay stretches).
    public var concealed: Int = 0
    /// Packets that arrived after their frame had been played, concealed or given up.
    public var late: Int = 0
    /// Packets received more than once (each extra copy counts).
    public var duplicated: Int = 0
    /// Delay of the frame last handed out, from its fastest expected arrival to its playout, in nanoseconds.
    public var currentDelay: UInt64 = 0
    /// Delay the buffer is steering towards, in nanoseconds.
    public var targetDelay: UInt64 = 0
    /// RFC 3550 interarrival jitter in 48 kHz timestamp units.
    public var interarrivalJitter: Double = 0
    /// The typical recent arrival delay (the median of the last half second or so) and the
    /// delay budgeted for the network, in nanoseconds: arrivals are calm when the first is below
    /// a quarter of the second.
    public var typicalArrivalDelay: UInt64 = 0
    public var networkBudget: UInt64 = 0
    /// How much media the calm has lasted so far (0 while arrivals are not calm), in nanoseconds.
    public var calmDuration: UInt64 = 0

    /// Creates statistics with every counter at zero.
    public init() {}

    /// RFC 3550 interarrival jitter in nanoseconds.
    public var interarrivalJitterNanoseconds: Double {
        MediaTime.nanoseconds(samples: interarrivalJitter)
    }
}
