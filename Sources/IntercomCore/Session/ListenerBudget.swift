/// What our stream may cost for the number of devices that hear it (pure).
///
/// Every listener is sent its own copy (unicast, sealed for its session), and on Wi-Fi each
/// copy takes its own airtime: a talker heard by four devices puts four streams on the air.
/// A stream's cost is mostly its packets: a 5 ms low-delay frame carries 72 bytes of headers
/// (IPv4 and UDP 28, RTP 12, sealing 32), 115 kb/s at 200 packets a second beside 96 kb/s of
/// Opus. So a talker heard by more than `lowDelayListeners` devices codes 10 ms frames (the
/// robust encoder: half the packets, some 9 ms more delay, which a household's page does not
/// notice), and one heard by more than `fullRateListeners` lowers the bitrate so that the
/// copies together cost about what `fullRateListeners` copies at the full rate would, never
/// below `lowestSharedBitrate` (where the codec alone still scores 3.9 PESQ-WB; at 32 kb/s it
/// loses another 0.2-0.6) and never above the rate the user chose.
public struct ListenerBudget: Sendable, Equatable {
    /// The bitrate chosen for the stream (`--bitrate`): what up to `fullRateListeners` get.
    public let fullBitrate: Int
    public static let lowDelayListeners = 2
    public static let fullRateListeners = 3
    public static let lowestSharedBitrate = 48_000

    public init(fullBitrate: Int) {
        self.fullBitrate = fullBitrate
    }

    /// The Opus bitrate for a stream heard by `listeners` devices (none counts as one: the
    /// first listener to come hears the stream at its full rate).
    public func bitrate(listeners: Int) -> Int {
        guard listeners > Self.fullRateListeners else { return fullBitrate }
        let shared = fullBitrate * Self.fullRateListeners / listeners / 1_000 * 1_000
        return min(fullBitrate, max(shared, Self.lowestSharedBitrate))
    }

    /// Whether 5 ms low-delay frames may be sent to `listeners` devices.
    public func allowsLowDelay(listeners: Int) -> Bool {
        listeners <= Self.lowDelayListeners
    }
}
