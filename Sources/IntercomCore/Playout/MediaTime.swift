/// Conversions between the 48 kHz media clock (Opus RTP timestamps, RFC 7587, and playout samples) and nanoseconds.
enum MediaTime {
    /// Duration of `samples` at 48 kHz in nanoseconds (1 sample = 62 500 / 3 ns).
    static func nanoseconds(samples: Int64) -> Int64 {
        samples * 62_500 / 3
    }

    /// Number of 48 kHz samples in `nanoseconds`, rounded toward zero.
    static func samples(nanoseconds: Int64) -> Int64 {
        nanoseconds * 3 / 62_500
    }
}
