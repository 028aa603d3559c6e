/// Datagrams waiting for their delivery time, earliest first; equal times keep arrival order.
///
/// A binary min-heap: a relay under load holds thousands of datagrams in flight.
struct DeliveryQueue {
    struct Delivery {
        let time: UInt64
        /// Breaks ties between equal times, so duplicates and bursts keep their order.
        let order: UInt64
        let direction: ImpairmentRelay.Direction
        let bytes: [UInt8]

        func isEarlier(than other: Delivery) -> Bool {
            (time, order) < (other.time, other.order)
        }
    }

    private var heap: [Delivery] = []
    private var nextOrder: UInt64 = 0

    var earliestTime: UInt64? { heap.first?.time }

    mutating func insert(time: UInt64, direction: ImpairmentRelay.Direction, bytes: [UInt8]) {
        heap.append(Delivery(time: time, order: nextOrder, direction: direction, bytes: bytes))
        nextOrder += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].isEarlier(than: heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest delivery if it is due at `now`.
    mutating func popDue(at now: UInt64) -> Delivery? {
        guard let first = heap.first, first.time <= now else { return nil }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var earliest = parent
            if left < heap.count, heap[left].isEarlier(than: heap[earliest]) { earliest = left }
            if right < heap.count, heap[right].isEarlier(than: heap[earliest]) { earliest = right }
            guard earliest != parent else { break }
            heap.swapAt(parent, earliest)
            parent = earliest
        }
        return first
    }
}
