import Glibc
import SystemPackage

/// Waits until sockets are readable, a timeout passes, or another thread calls `wake()`.
///
/// Waking needs no lock: `wake()` writes a byte to a non-blocking pipe the waiter also polls.
/// (A pipe, not an eventfd: Swift's Glibc module does not export the GNU `eventfd`.)
/// One thread waits; any thread may wake it.
public final class Poller: Sendable {
    private let sockets: [UDPSocket]
    private let wakeReadEnd: Int32
    private let wakeWriteEnd: Int32

    /// A poller for the sockets, which it keeps open while it lives.
    public init(watching sockets: [UDPSocket]) throws(NetworkError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .systemCall(operation: "pipe", errno: Errno(rawValue: errno)) }
        for end in ends {
            // A full pipe already means "wake up", so writes may fail without blocking;
            // the reader drains without blocking.
            guard fcntl(end, F_SETFL, O_NONBLOCK) == 0, fcntl(end, F_SETFD, FD_CLOEXEC) == 0 else {
                let error = Errno(rawValue: errno)
                close(ends[0])
                close(ends[1])
                throw .systemCall(operation: "fcntl on the wake pipe", errno: error)
            }
        }
        self.sockets = sockets
        self.wakeReadEnd = ends[0]
        self.wakeWriteEnd = ends[1]
    }

    deinit {
        close(wakeReadEnd)
        close(wakeWriteEnd)
    }

    /// Blocks until a socket is readable, `wake()` is called, or the timeout passes.
    ///
    /// - Parameter timeoutNanoseconds: how long to wait at most, rounded up to whole
    ///   milliseconds (poll's resolution); nil waits without limit.
    public func wait(timeoutNanoseconds: UInt64?) throws(NetworkError) -> PollResult {
        var descriptors = sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        descriptors.append(pollfd(fd: wakeReadEnd, events: Int16(POLLIN), revents: 0))
        let timeoutMilliseconds = timeoutNanoseconds.map { Int32(clamping: ($0 / 1_000_000) + ($0 % 1_000_000 == 0 ? 0 : 1)) } ?? -1
        let count = nfds_t(descriptors.count)
        if case .failure(let error) = retryingOnInterrupt({ poll(&descriptors, count, timeoutMilliseconds) }) {
            throw .systemCall(operation: "poll", errno: error)
        }
        // An error condition counts as readable: the receive that follows reports and clears it.
        let readable = descriptors.dropLast().indices.filter { descriptors[$0].revents != 0 }
        let wasWoken = descriptors[descriptors.count - 1].revents != 0
        if wasWoken { drainWakePipe() }
        return PollResult(readableSocketIndices: readable, wasWoken: wasWoken)
    }

    /// Makes the current or next `wait` return. Safe from any thread.
    public func wake() {
        var byte: UInt8 = 1
        // Failure means the pipe is full, so the waiter is already due to wake.
        _ = retryingOnInterrupt { write(wakeWriteEnd, &byte, 1) }
    }

    private func drainWakePipe() {
        var scratch = [UInt8](repeating: 0, count: 64)
        while case .success(let count) = retryingOnInterrupt({ read(wakeReadEnd, &scratch, scratch.count) }), count > 0 {}
    }
}

/// What ended a `Poller.wait`.
public struct PollResult: Equatable, Sendable {
    /// Positions, in the poller's socket list, of the sockets with something to receive.
    public var readableSocketIndices: [Int]
    /// Whether `wake()` was called.
    public var wasWoken: Bool

    public init(readableSocketIndices: [Int], wasWoken: Bool) {
        self.readableSocketIndices = readableSocketIndices
        self.wasWoken = wasWoken
    }

    /// Nothing happened before the timeout.
    public var timedOut: Bool { readableSocketIndices.isEmpty && !wasWoken }
}
