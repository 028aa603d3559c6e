/// The RFC 3550 (appendix A.8) interarrival jitter estimate, in RTP timestamp units.
struct InterarrivalJitterEstimator: Sendable {
    private var previousTransit: Int64?
    /// Smoothed mean deviation of transit time, in 48 kHz timestamp units.
    private(set) var jitter: Double = 0

    /// Updates the estimate with a packet, in arrival order.
    mutating func record(timestamp: Int64, arrival: UInt64) {
        let transit = MediaTime.samples(nanoseconds: Int64(arrival)) - timestamp
        if let previousTransit {
            let difference = Double((transit - previousTransit).magnitude)
            jitter += (difference - jitter) / 16
        }
        previousTransit = transit
    }
}
