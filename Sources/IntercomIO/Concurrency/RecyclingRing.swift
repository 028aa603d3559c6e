/// A ring from one thread to another whose elements come back: the consumer gives back each
/// one it is done with, and the producer fills a returned one rather than make a new one, so
/// that once a few have gone round neither side allocates (buffers keep their storage). Both
/// directions are `SPSCRing`s: nothing blocks.
public final class RecyclingRing<Element>: Sendable {
    private let filled: SPSCRing<Element>
    private let returned: SPSCRing<Element>

    /// `spare` makes the elements the ring starts with, as many as it holds, so that even a
    /// consumer running late for a while (more elements in flight than ever before) does not
    /// make the producer allocate.
    public init(capacity: Int, spare: () -> Element) {
        filled = SPSCRing(capacity: capacity)
        returned = SPSCRing(capacity: capacity)
        for _ in 0..<capacity { returned.push(spare()) }
    }

    /// Producer side: an element to fill again, when one has come back.
    public func reusable() -> Element? { returned.pop() }

    /// Producer side. Returns false, keeping nothing, when the ring is full.
    @discardableResult
    public func push(_ element: consuming Element) -> Bool { filled.push(element) }

    /// Consumer side. Returns nil when the ring is empty.
    public func pop() -> Element? { filled.pop() }

    /// Consumer side: done with `element`, which the producer may fill again. Give it up
    /// with `consume`: a buffer the consumer still refers to would be copied, not refilled.
    public func giveBack(_ element: consuming Element) { returned.push(element) }

    /// Elements waiting for the consumer; exact only when called from one of the two sides.
    public var count: Int { filled.count }
}
