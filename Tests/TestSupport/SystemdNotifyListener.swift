import Foundation

/// systemd's end of `NOTIFY_SOCKET`, for tests that play systemd: a datagram socket at `path`
/// that collects what a service tells it (READY=1, WATCHDOG=1, STOPPING=1…).
public final class SystemdNotifyListener {
    public let path: String
    private let fd: Int32
    public private(set) var messages: [String] = []

    /// Binds `path` (any user may send to it).
    public init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (index, byte) in path.utf8.enumerated() { raw[index] = byte } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        chmod(path, 0o666)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Collects messages until `done` holds for those so far, or `seconds` pass; returns whether it held.
    @discardableResult
    public func collect(for seconds: Double, until done: ([String]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 512)
        while !done(messages), Date() < deadline {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { messages.append(String(decoding: buffer.prefix(count), as: UTF8.self)) }
        }
        return done(messages)
    }
}
