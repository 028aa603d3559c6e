import CLinux
import Glibc
import SystemPackage

/// Waits until sockets are readable, a timeout passes, or another thread calls `wake()`.
///
/// Waking needs no lock: `wake()` adds one to an eventfd the waiter also polls, and a wait
/// that sees it reads the count back to zero (one read, however many wakes). Waiting
/// allocates nothing: the poll table is made once. One thread waits; any thread may wake it.
///
/// `@unchecked` for the poll table, a pointer that only the one waiting thread writes; the
/// rest is constant, and waking is a write to the eventfd, which the kernel orders.
public final class Poller: @unchecked Sendable {
    /// Most sockets one poller watches (`PollResult` holds them as bits of one word).
    public static let maximumSockets = 64

    private let sockets: [UDPSocket]
    private let wakeDescriptor: Int32
    /// The sockets' entries, then the eventfd's; only the waiting thread touches it.
    private let table: UnsafeMutableBufferPointer<pollfd>

    /// A poller for the sockets (at most `maximumSockets`), which it keeps open while it lives.
    public init(watching sockets: [UDPSocket]) throws(NetworkError) {
        precondition(sockets.count <= Self.maximumSockets, "a poller watches at most \(Self.maximumSockets) sockets")
        let descriptor = intercom_wake_eventfd()
        guard descriptor >= 0 else { throw .systemCall(operation: "eventfd", errno: Errno(rawValue: errno)) }
        self.sockets = sockets
        wakeDescriptor = descriptor
        table = .allocate(capacity: sockets.count + 1)
        for (index, socket) in sockets.enumerated() {
            table[index] = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        }
        table[sockets.count] = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    }

    deinit {
        close(wakeDescriptor)
        table.deallocate()
    }

    /// Blocks until a socket is readable, `wake()` is called, or the timeout passes.
    ///
    /// - Parameter timeoutNanoseconds: how long to wait at most, rounded up to whole
    ///   milliseconds (poll's resolution); nil waits without limit.
    public func wait(timeoutNanoseconds: UInt64?) throws(NetworkError) -> PollResult {
        for index in table.indices { table[index].revents = 0 }
        let timeoutMilliseconds = timeoutNanoseconds.map { Int32(clamping: ($0 / 1_000_000) + ($0 % 1_000_000 == 0 ? 0 : 1)) } ?? -1
        let (base, count) = (table.baseAddress, nfds_t(table.count))
        if case .failure(let error) = retryingOnInterrupt({ poll(base, count, timeoutMilliseconds) }) {
            throw .systemCall(operation: "poll", errno: error)
        }
        // An error condition counts as readable: the receive that follows reports and clears it.
        var readable: UInt64 = 0
        for index in sockets.indices where table[index].revents != 0 { readable |= 1 << UInt64(index) }
        let wasWoken = table[sockets.count].revents != 0
        if wasWoken {
            var count: UInt64 = 0
            _ = retryingOnInterrupt { read(wakeDescriptor, &count, MemoryLayout<UInt64>.size) }
        }
        return PollResult(readableSockets: readable, wasWoken: wasWoken)
    }

    /// Makes the current or next `wait` return. Safe from any thread.
    public func wake() {
        var one: UInt64 = 1
        // It fails only when the count is near 2^64, so the waiter is already due to wake.
        _ = retryingOnInterrupt { write(wakeDescriptor, &one, MemoryLayout<UInt64>.size) }
    }
}

/// What ended a `Poller.wait`.
public struct PollResult: Equatable, Sendable {
    /// Bit i set: the poller's socket i has something to receive.
    public let readableSockets: UInt64
    /// Whether `wake()` was called.
    public let wasWoken: Bool

    /// Whether the socket at `index` in the poller's list has something to receive.
    public func isReadable(_ index: Int) -> Bool { readableSockets & (1 << UInt64(index)) != 0 }

    /// Nothing happened before the timeout.
    public var timedOut: Bool { readableSockets == 0 && !wasWoken }
}
