extension ReportBlock {
    /// The round-trip time this block reveals to the sender it reports on (RFC 3550 §6.4.1):
    /// arrival − LSR − DLSR, in NTP short format.
    ///
    /// - Parameter arrival: the wallclock NTP time when this block arrived.
    /// - Returns: nanoseconds, or nil when the receiver has had no SR from us yet (LSR 0)
    ///   or the clocks make the result negative.
    public func roundTripNanoseconds(arrivedAt arrival: NTPTimestamp) -> UInt64? {
        guard lastSenderReport != 0 else { return nil }
        let roundTrip = arrival.shortFormat &- lastSenderReport &- delaySinceLastSenderReport
        // A "negative" result wraps to a huge value; anything past half the range is one.
        guard roundTrip < 1 << 31 else { return nil }
        return NTPShortFormat.toNanoseconds(roundTrip)
    }
}
