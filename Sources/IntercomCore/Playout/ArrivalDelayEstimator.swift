import DequeModule

/// Measures how late packets arrive compared with the fastest packet of a recent sliding window.
///
/// A packet's transit offset is `arrival − timestamp`: unknown constants (clock offset, base network
/// delay) cancel out once the window minimum is subtracted. The window slides, so slow clock drift
/// between sender and receiver moves the minimum along instead of accumulating.
struct ArrivalDelayEstimator: Sendable {
    private struct Sample: Sendable {
        let arrival: UInt64
        let offset: Int64
    }

    private let window: UInt64
    /// Candidates for the window minimum: arrivals in order, offsets strictly increasing, so the front is the minimum.
    private var minimumCandidates: Deque<Sample> = []

    /// Room for a window of 10 ms packets is made here, so that recording (on the playback
    /// thread) does not grow the list: with the clocks drifting apart every packet of the window
    /// can be a candidate. A stream of shorter packets grows it once. (Made for every stream,
    /// strangers' included: room for the shortest packets would cost 19 kB a stream.)
    init(window: UInt64) {
        self.window = window
        let tenMilliseconds = MediaTime.nanoseconds(samples: Int64(VoiceFormat.samples(milliseconds: 10)))
        minimumCandidates.reserveCapacity(Int(window / UInt64(tenMilliseconds)) + 1)
    }

    /// Records a packet and returns its delay beyond the fastest packet of the window, in nanoseconds.
    mutating func record(timestampNanoseconds: Int64, arrival: UInt64) -> UInt64 {
        let offset = Int64(arrival) - timestampNanoseconds
        while let last = minimumCandidates.last, last.offset >= offset {
            minimumCandidates.removeLast()
        }
        minimumCandidates.append(Sample(arrival: arrival, offset: offset))
        // The newest sample always stays, so the window never empties, even after a long pause.
        while let first = minimumCandidates.first, arrival > first.arrival + window {
            minimumCandidates.removeFirst()
        }
        return UInt64(offset - minimumCandidates[minimumCandidates.startIndex].offset)
    }

    /// How long after its fastest expected arrival a frame with this timestamp is played at `time`.
    func delay(ofTimestampNanoseconds timestampNanoseconds: Int64, at time: UInt64) -> Int64 {
        guard let fastest = minimumCandidates.first else { return 0 }
        return Int64(time) - (timestampNanoseconds + fastest.offset)
    }
}
