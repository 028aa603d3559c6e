import Glibc
import SystemPackage

/// A failure of a socket, poller or network thread.
public enum NetworkError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Another socket already has the port.
    case portInUse(UInt16)
    /// An IPv6 destination for a socket that could only be opened for IPv4.
    case ipv6Unavailable(destination: SocketAddress)
    /// A datagram longer than the receive buffer arrived; it was dropped.
    case datagramTooLarge(byteCount: Int, bufferSize: Int)
    /// A system call failed; the operation names it and what it was doing.
    case systemCall(operation: String, errno: Errno)

    public var description: String {
        switch self {
        case .portInUse(let port):
            "port \(port) is in use"
        case .ipv6Unavailable(let destination):
            "cannot send to \(destination): IPv6 is unavailable on this machine"
        case .datagramTooLarge(let byteCount, let bufferSize):
            "dropped a \(byteCount)-byte datagram larger than the \(bufferSize)-byte receive buffer"
        case .systemCall(let operation, let errno):
            "\(operation) failed: \(String(cString: strerror(errno.rawValue))) (errno \(errno.rawValue))"
        }
    }
}
