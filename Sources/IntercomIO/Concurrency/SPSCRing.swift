import Synchronization

/// A bounded ring for exactly one producer thread and one consumer thread.
///
/// Neither side ever blocks or takes a lock, so a real-time audio thread can sit on either
/// end. A full ring refuses the element (the producer counts it as dropped) rather than wait.
///
/// `@unchecked` for the slots, a pointer: a slot belongs to the producer until `tail`'s
/// release publishes it and to the consumer until `head`'s release gives it back, so no slot
/// is touched by both sides at once.
public final class SPSCRing<Element>: @unchecked Sendable {
    private let capacity: Int
    private let slots: UnsafeMutablePointer<Element?>
    /// Next slot to read; written only by the consumer.
    private let head = Atomic<Int>(0)
    /// Next slot to write; written only by the producer.
    private let tail = Atomic<Int>(0)

    public init(capacity: Int) {
        precondition(capacity > 0, "a ring needs room for one element")
        // One slot stays empty to tell a full ring from an empty one.
        self.capacity = capacity + 1
        slots = .allocate(capacity: self.capacity)
        slots.initialize(repeating: nil, count: self.capacity)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Producer side. Returns false, keeping nothing, when the ring is full. The element is
    /// moved into the ring, so once the consumer has it the producer holds no reference to it.
    @discardableResult
    public func push(_ element: consuming Element) -> Bool {
        let tail = tail.load(ordering: .relaxed)
        let next = (tail + 1) % capacity
        guard next != head.load(ordering: .acquiring) else { return false }
        slots[tail] = consume element
        self.tail.store(next, ordering: .releasing)
        return true
    }

    /// Consumer side. Returns nil when the ring is empty.
    public func pop() -> Element? {
        let head = head.load(ordering: .relaxed)
        guard head != tail.load(ordering: .acquiring) else { return nil }
        let element = slots[head].take()
        self.head.store((head + 1) % capacity, ordering: .releasing)
        return element
    }

    /// Elements waiting; exact only when called from one of the two sides.
    public var count: Int {
        (tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) + capacity) % capacity
    }
}
