import Glibc

extension SocketAddress {
    /// The index of the local interface that has this address (for publishing a service on it
    /// alone), or nil when no interface has it.
    public func localInterfaceIndex() -> Int32? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, let name = current.pointee.ifa_name else { continue }
            let bytes: [UInt8]
            switch (Int32(address.pointee.sa_family), family) {
            case (AF_INET, .ipv4):
                bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                }
            case (AF_INET6, .ipv6):
                bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
            default:
                continue
            }
            if bytes == addressBytes { return Int32(bitPattern: if_nametoindex(name)) }
        }
        return nil
    }
}
