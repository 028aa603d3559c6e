import Glibc

/// An IPv4 or IPv6 address with a UDP port.
///
/// IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) that a dual-stack socket reports are
/// turned into plain IPv4, so one peer has one address whichever way it is reached.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// IPv4 or IPv6.
    public enum Family: Hashable, Sendable {
        case ipv4
        case ipv6
    }

    public let family: Family
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let addressBytes: [UInt8]
    public let port: UInt16
    /// The IPv6 zone (interface index) of a link-local address; 0 otherwise.
    public let scopeID: UInt32

    private static let ipv4MappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    private init(family: Family, addressBytes: [UInt8], port: UInt16, scopeID: UInt32) {
        self.family = family
        self.addressBytes = addressBytes
        self.port = port
        self.scopeID = scopeID
    }

    /// An IPv4 address from its four bytes, or nil for another count.
    public init?(ipv4Bytes bytes: [UInt8], port: UInt16) {
        guard bytes.count == 4 else { return nil }
        self.init(family: .ipv4, addressBytes: bytes, port: port, scopeID: 0)
    }

    /// An IPv6 address from its sixteen bytes, or nil for another count. A v4-mapped
    /// address becomes plain IPv4.
    public init?(ipv6Bytes bytes: [UInt8], port: UInt16, scopeID: UInt32 = 0) {
        guard bytes.count == 16 else { return nil }
        if bytes.starts(with: Self.ipv4MappedPrefix) {
            self.init(family: .ipv4, addressBytes: Array(bytes[12...]), port: port, scopeID: 0)
        } else {
            self.init(family: .ipv6, addressBytes: bytes, port: port, scopeID: scopeID)
        }
    }

    /// 127.0.0.1 with the port.
    /// The same address with another port.
    public func with(port: UInt16) -> SocketAddress {
        switch family {
        case .ipv4: SocketAddress(ipv4Bytes: addressBytes, port: port)!
        case .ipv6: SocketAddress(ipv6Bytes: addressBytes, port: port, scopeID: scopeID)!
        }
    }

    public static func loopbackIPv4(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv4, addressBytes: [127, 0, 0, 1], port: port, scopeID: 0)
    }

    /// ::1 with the port.
    public static func loopbackIPv6(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv6, addressBytes: Array(repeating: 0, count: 15) + [1], port: port, scopeID: 0)
    }

    /// 0.0.0.0: every IPv4 interface, for binding.
    public static func anyIPv4(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv4, addressBytes: [0, 0, 0, 0], port: port, scopeID: 0)
    }

    /// `::`: every interface, for binding; a dual-stack socket bound here takes IPv4 too.
    public static func anyIPv6(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv6, addressBytes: Array(repeating: 0, count: 16), port: port, scopeID: 0)
    }

    /// Whether the address is 0.0.0.0 or `::`.
    public var isUnspecified: Bool { addressBytes.allSatisfy { $0 == 0 } }

    /// The same address and port with another port.
    public func withPort(_ port: UInt16) -> SocketAddress {
        SocketAddress(family: family, addressBytes: addressBytes, port: port, scopeID: scopeID)
    }

    /// `1.2.3.4:5004`, `[::1]:5004` or `[fe80::1%2]:5004`.
    public var description: String {
        let host = self.host
        switch family {
        case .ipv4: return "\(host):\(port)"
        case .ipv6: return scopeID == 0 ? "[\(host)]:\(port)" : "[\(host)%\(scopeID)]:\(port)"
        }
    }

    /// The address without its port, in numeric notation (no brackets).
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let addressFamily = family == .ipv4 ? AF_INET : AF_INET6
        let converted = addressBytes.withUnsafeBytes { raw in
            inet_ntop(addressFamily, raw.baseAddress, &text, socklen_t(text.count))
        }
        // inet_ntop fails only for an unknown family or a short buffer, neither possible here.
        guard converted != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// MARK: - Conversion to and from the C socket address structures

/// The last few senders a socket heard, by their C address: a datagram from one of them is
/// given the `SocketAddress` made the first time, so that receiving allocates nothing (making
/// one allocates its byte arrays). Owned by the thread that receives.
public struct SenderAddressCache {
    private struct Entry {
        var family: Int32
        var port: UInt16
        var high: UInt64
        var low: UInt64
        var scopeID: UInt32
        var address: SocketAddress
    }

    private var entries: [Entry] = []
    private var next = 0
    private let capacity: Int

    public init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
        entries.reserveCapacity(self.capacity)
    }

    mutating func address(of storage: sockaddr_storage) -> SocketAddress? {
        var storage = storage
        let family = Int32(storage.ss_family)
        let (port, high, low, scopeID): (UInt16, UInt64, UInt64, UInt32)
        switch family {
        case AF_INET:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            (port, high, low, scopeID) = (address.sin_port, 0, UInt64(address.sin_addr.s_addr), 0)
        case AF_INET6:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            let (first, second) = withUnsafeBytes(of: address.sin6_addr) {
                ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            (port, high, low, scopeID) = (address.sin6_port, first, second, address.sin6_scope_id)
        default:
            return nil
        }
        if let known = entries.first(where: {
            $0.family == family && $0.port == port && $0.high == high && $0.low == low && $0.scopeID == scopeID
        }) {
            return known.address
        }
        guard let address = SocketAddress(storage: storage) else { return nil }
        let entry = Entry(family: family, port: port, high: high, low: low, scopeID: scopeID, address: address)
        if entries.count < capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % capacity
        }
        return address
    }
}

extension SocketAddress {
    /// Reads a `sockaddr_in` or `sockaddr_in6`; nil for any other family.
    init?(storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            let bytes = withUnsafeBytes(of: address.sin_addr) { Array($0) }
            self.init(family: .ipv4, addressBytes: bytes, port: UInt16(bigEndian: address.sin_port), scopeID: 0)
        case AF_INET6:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
            self.init(ipv6Bytes: bytes, port: UInt16(bigEndian: address.sin6_port), scopeID: address.sin6_scope_id)
        default:
            return nil
        }
    }

    /// Calls `body` with the address as a C `sockaddr` and its length; an IPv4 address
    /// `mappedToIPv6` is given as `::ffff:a.b.c.d`, as a dual-stack socket takes it. Made on
    /// the stack: sending allocates nothing.
    func withSockaddr<Result>(mappedToIPv6: Bool = false, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch family {
        case .ipv4 where !mappedToIPv6:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: addressBytes) }
            return Self.asSockaddr(&address, body)
        case .ipv4, .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { raw in
                if family == .ipv6 {
                    raw.copyBytes(from: addressBytes)
                } else {
                    raw[10] = 0xFF
                    raw[11] = 0xFF
                    for (index, byte) in addressBytes.enumerated() { raw[12 + index] = byte }
                }
            }
            if family == .ipv6 { address.sin6_scope_id = scopeID }
            return Self.asSockaddr(&address, body)
        }
    }

    /// `address` (a `sockaddr_in` or `sockaddr_in6`) seen as the `sockaddr` C takes, with its length.
    private static func asSockaddr<Address, Result>(
        _ address: inout Address, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }
}
