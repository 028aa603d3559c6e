import Synchronization

/// A request to stop, set by one thread and watched by the loops of others: the one object
/// they share, since an `Atomic` itself cannot be passed around.
public final class StopFlag: Sendable {
    public let value = Atomic<Bool>(false)

    public init() {}
}
