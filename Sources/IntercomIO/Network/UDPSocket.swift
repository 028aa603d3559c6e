import Glibc
import SystemPackage

/// A bound, non-blocking UDP socket; closed when released.
///
/// One socket serves IPv4 and IPv6 peers: it is an IPv6 socket with `IPV6_V6ONLY` off,
/// reaching IPv4 peers through v4-mapped addresses and reporting them as plain IPv4.
/// Where IPv6 is unavailable it falls back to IPv4 only. `SO_REUSEADDR` stays off, so a
/// port another socket holds is an error rather than a silent share.
public final class UDPSocket: Sendable {
    /// The address the socket is bound to, with the port the kernel chose if asked for 0.
    public let localAddress: SocketAddress
    let descriptor: Int32

    /// What the socket asks of the kernel for buffering: several hundred ms of bursts.
    /// The kernel caps it at `net.core.rmem_max` without complaint.
    private static let requestedReceiveBufferBytes: Int32 = 1 << 20

    /// The bound port.
    public var localPort: UInt16 { localAddress.port }

    /// Binds a dual-stack socket to every interface, or an IPv4 one where IPv6 is unavailable.
    ///
    /// - Parameter port: the port to bind, or 0 for one the kernel picks.
    public convenience init(port: UInt16 = 0) throws(NetworkError) {
        let opened: (descriptor: Int32, address: SocketAddress)
        do throws(NetworkError) {
            opened = try Self.open(boundTo: .anyIPv6(port: port))
        } catch .systemCall(_, let code) where code == .addressFamilyNotSupported || code == .addressNotAvailable {
            // No IPv6 in this kernel, or IPv6 disabled on every interface.
            opened = try Self.open(boundTo: .anyIPv4(port: port))
        }
        self.init(descriptor: opened.descriptor, localAddress: opened.address)
    }

    /// Binds a socket of the address's family to that address (for example loopback only).
    /// Binding `::` gives a dual-stack socket.
    public convenience init(boundTo address: SocketAddress) throws(NetworkError) {
        let opened = try Self.open(boundTo: address)
        self.init(descriptor: opened.descriptor, localAddress: opened.address)
    }

    private init(descriptor: Int32, localAddress: SocketAddress) {
        self.descriptor = descriptor
        self.localAddress = localAddress
    }

    deinit {
        // Not retried on EINTR: on Linux the descriptor is released even then.
        close(descriptor)
    }

    private static func open(boundTo address: SocketAddress) throws(NetworkError) -> (descriptor: Int32, address: SocketAddress) {
        let domain = address.family == .ipv6 ? AF_INET6 : AF_INET
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(domain, type, 0)
        guard descriptor >= 0 else { throw .systemCall(operation: "socket", errno: Errno(rawValue: errno)) }
        do throws(NetworkError) {
            if address.family == .ipv6 && address.isUnspecified {
                try setOption(descriptor, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: 0, operation: "IPV6_V6ONLY")
            }
            try setOption(descriptor, level: SOL_SOCKET, name: SO_RCVBUF, value: requestedReceiveBufferBytes, operation: "SO_RCVBUF")
            try bind(descriptor, to: address)
            return (descriptor, try boundAddress(of: descriptor))
        } catch {
            close(descriptor)
            throw error
        }
    }

    private static func setOption(
        _ descriptor: Int32, level: Int32, name: Int32, value: Int32, operation: String
    ) throws(NetworkError) {
        var value = value
        guard setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .systemCall(operation: "setsockopt \(operation)", errno: Errno(rawValue: errno))
        }
    }

    private static func bind(_ descriptor: Int32, to address: SocketAddress) throws(NetworkError) {
        let result = address.withSockaddr { Glibc.bind(descriptor, $0, $1) }
        guard result == 0 else {
            let error = Errno(rawValue: errno)
            if error == .addressInUse { throw .portInUse(address.port) }
            throw .systemCall(operation: "bind to \(address)", errno: error)
        }
    }

    private static func boundAddress(of descriptor: Int32) throws(NetworkError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { throw .systemCall(operation: "getsockname", errno: Errno(rawValue: errno)) }
        guard let address = SocketAddress(storage: storage) else {
            throw .systemCall(operation: "getsockname", errno: .addressFamilyNotSupported)
        }
        return address
    }

    /// Sends one datagram.
    ///
    /// An IPv4 destination goes out v4-mapped from a dual-stack socket.
    public func send(_ bytes: [UInt8], to destination: SocketAddress) throws(NetworkError) {
        let mapped: Bool
        switch (localAddress.family, destination.family) {
        case (.ipv6, .ipv4): mapped = true
        case (.ipv4, .ipv6): throw .ipv6Unavailable(destination: destination)
        default: mapped = false
        }
        let result = destination.withSockaddr(mappedToIPv6: mapped) { address, length in
            bytes.withUnsafeBytes { payload in
                retryingOnInterrupt {
                    sendto(descriptor, payload.baseAddress, payload.count, Int32(MSG_NOSIGNAL), address, length)
                }
            }
        }
        if case .failure(let error) = result {
            throw .systemCall(operation: "sendto \(destination)", errno: error)
        }
    }

    /// Receives one datagram into the front of `buffer`, whose count is the most it takes.
    ///
    /// - Returns: the datagram's length and sender, or nil when none is waiting.
    /// - Throws: `.datagramTooLarge` when a datagram did not fit; it is gone, and the next
    ///   call receives the one after it.
    public func receive(into buffer: inout [UInt8]) throws(NetworkError) -> (count: Int, from: SocketAddress)? {
        var senders = SenderAddressCache(capacity: 1)
        return try receive(into: &buffer, senders: &senders)
    }

    /// `receive(into:)` for a loop that keeps `senders` from datagram to datagram: a sender
    /// it heard lately costs no allocation.
    public func receive(into buffer: inout [UInt8], senders: inout SenderAddressCache) throws(NetworkError) -> (count: Int, from: SocketAddress)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let capacity = buffer.count
        let result = buffer.withUnsafeMutableBytes { destination in
            withUnsafeMutablePointer(to: &storage) { storagePointer in
                storagePointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sender in
                    retryingOnInterrupt {
                        // MSG_TRUNC makes the kernel return the real length, so truncation shows.
                        recvfrom(descriptor, destination.baseAddress, destination.count, Int32(MSG_TRUNC), sender, &length)
                    }
                }
            }
        }
        switch result {
        case .failure(let error) where error == .wouldBlock:
            return nil
        case .failure(let error):
            throw .systemCall(operation: "recvfrom", errno: error)
        case .success(let byteCount) where byteCount > capacity:
            throw .datagramTooLarge(byteCount: byteCount, bufferSize: capacity)
        case .success(let byteCount):
            guard let sender = senders.address(of: storage) else {
                throw .systemCall(operation: "recvfrom", errno: .addressFamilyNotSupported)
            }
            return (byteCount, sender)
        }
    }
}
