/// Remembers which recent sequence numbers were received, to tell duplicates from first arrivals.
///
/// A fixed ring indexed by sequence number: no allocation after creation. Sequence numbers older
/// than `capacity` behind the newest are no longer remembered.
struct ReceivedSequenceHistory: Sendable {
    private var slots: [Int64]

    init(capacity: Int) {
        slots = Array(repeating: Int64.min, count: capacity)
    }

    /// Records `sequenceNumber`; returns false when it had already been recorded.
    mutating func insert(_ sequenceNumber: Int64) -> Bool {
        let count = Int64(slots.count)
        let slot = Int((sequenceNumber % count + count) % count)
        if slots[slot] == sequenceNumber { return false }
        // Never let a very old packet evict the newer sequence number sharing its slot.
        if slots[slot] < sequenceNumber { slots[slot] = sequenceNumber }
        return true
    }
}
