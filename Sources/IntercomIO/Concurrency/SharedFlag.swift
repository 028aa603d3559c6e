import Synchronization

/// A flag set by one thread and watched by the loops of others (a request to stop, news that
/// a file changed): the one object they share, since an `Atomic` itself cannot be passed around.
public final class SharedFlag: Sendable {
    public let value = Atomic<Bool>(false)

    public init() {}
}
