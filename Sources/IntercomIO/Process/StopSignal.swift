import Dispatch
import Glibc

/// SIGINT and SIGTERM, taken over whatever this process inherited: a shell starts background
/// jobs with SIGINT ignored, and the test tools that stop their helpers with SIGINT must still
/// stop them. Made before the command opens its sockets, so that a signal sent as soon as they
/// are there is not lost (ignored) or fatal (the default action) before anyone waits for it.
public final class StopSignal {
    private let requested = DispatchSemaphore(value: 0)
    private let sources: [any DispatchSourceSignal]

    public init() {
        let requested = requested
        sources = [SIGINT, SIGTERM].map { number in
            // Dispatch sees the signal only once its default action (exit) is off.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { requested.signal() }
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }

    /// Blocks until a stop signal arrives (or came since `init`) or `seconds` pass (nil: no limit).
    public func wait(seconds: Double?) {
        _ = requested.wait(timeout: seconds.map { .now() + $0 } ?? .distantFuture)
    }
}
