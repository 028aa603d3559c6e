import Foundation

/// A UDP socket on 127.0.0.1 for tests that act as a stranger on the LAN: sends raw
/// datagrams and reads what comes back.
public final class LoopbackUDP: @unchecked Sendable {
    public let fd: Int32
    public let port: Int

    /// Binds `port` on loopback (0: any free one).
    public init(port: Int = 0) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var address = Self.address(port)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }

    public func send(_ bytes: [UInt8], to port: Int) {
        var address = Self.address(port)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// The next datagram and the port it came from, or nil after `timeout` seconds.
    public func receive(timeout: Double) -> (bytes: [UInt8], fromPort: Int)? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &length) }
        }
        guard count >= 0 else { return nil }
        return (Array(buffer[0..<count]), Int(UInt16(bigEndian: from.sin_port)))
    }

    static func address(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}

/// A man in the middle on loopback: peer A calls the forwarder's port (`socket`), which
/// passes every datagram on to peer B from a socket of its own (`toward`) and B's answers
/// back to A, and keeps a copy of each with its direction, for tests that replay, tamper
/// with or inspect a real call's packets. `roam()` moves its side of B's conversation to a
/// new port, as a laptop that changes networks would.
public final class RecordingForwarder: @unchecked Sendable {
    public struct Datagram: Sendable {
        public let bytes: [UInt8]
        public let towardB: Bool
        /// When the forwarder received it.
        public let at: ContinuousClock.Instant
    }

    /// Where A sends.
    public let socket = LoopbackUDP()
    private let peerB: Int
    private let lock = NSLock()
    private var recorded: [Datagram] = []
    private var peerA: Int?
    private var bSide = LoopbackUDP()
    private var running = true
    private var thread: Thread?
    /// Sees each datagram from B before it goes on to A, and may send B datagrams of its own
    /// first (from the address B hears A at): a man in the middle who acts on what it reads.
    private let beforeForwardingToA: (@Sendable (_ datagram: [UInt8], _ sendToB: ([UInt8]) -> Void) -> Void)?

    public var port: Int { socket.port }

    /// The socket B hears A from now.
    public var toward: LoopbackUDP { lock.withLock { bSide } }

    /// Says which datagrams are lost on the way (recorded all the same), by their bytes and direction.
    private let losing: (@Sendable (_ datagram: [UInt8], _ towardB: Bool) -> Bool)?

    public init(
        toB peerB: Int, beforeForwardingToA: (@Sendable (_ datagram: [UInt8], _ sendToB: ([UInt8]) -> Void) -> Void)? = nil,
        losing: (@Sendable (_ datagram: [UInt8], _ towardB: Bool) -> Bool)? = nil
    ) {
        self.peerB = peerB
        self.beforeForwardingToA = beforeForwardingToA
        self.losing = losing
        let thread = Thread { [unowned self] in self.forward() }
        self.thread = thread
        thread.start()
    }

    deinit { stop() }

    public var datagrams: [Datagram] { lock.withLock { recorded } }

    /// Waits until `count` sealed packets (type 4: the call's audio and reports) have gone
    /// toward B, so that the call is known to be under way however long A took to start.
    public func waitForSealedPacketsTowardB(_ count: Int, seconds: Double = 20) -> Bool {
        waitUntil(seconds: seconds, every: .milliseconds(20)) {
            lock.withLock { recorded.lazy.filter { $0.towardB && $0.bytes.first == 4 }.count } >= count
        } != nil
    }

    /// From now on, B hears A from a new port.
    public func roam() {
        let fresh = LoopbackUDP()
        lock.withLock { bSide = fresh }
    }

    public func stop() {
        lock.withLock { running = false }
        while thread?.isFinished == false { usleep(10_000) }
    }

    private func forward() {
        while lock.withLock({ running }) {
            let b = toward
            if let (bytes, from) = socket.receive(timeout: 0.005), from != peerB {
                lock.withLock {
                    peerA = from
                    recorded.append(Datagram(bytes: bytes, towardB: true, at: .now))
                }
                if losing?(bytes, true) != true { b.send(bytes, to: peerB) }
            }
            while let (bytes, _) = b.receive(timeout: 0) {
                lock.withLock { recorded.append(Datagram(bytes: bytes, towardB: false, at: .now)) }
                beforeForwardingToA?(bytes) { b.send($0, to: peerB) }
                if losing?(bytes, false) == true { continue }
                if let peerA = lock.withLock({ peerA }) { socket.send(bytes, to: peerA) }
            }
        }
    }
}
