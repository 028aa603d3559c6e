import Glibc

/// Tells systemd how the service is doing (sd_notify's protocol: datagrams to
/// `$NOTIFY_SOCKET`), without linking libsystemd. Does nothing outside systemd.
public struct SystemdNotifier: Sendable {
    private let socketPath: String?
    /// How often systemd expects a watchdog ping, if it asked for one.
    public let watchdogInterval: UInt64?

    public init(environment: [String: String]) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        watchdogInterval = environment["WATCHDOG_USEC"].flatMap(UInt64.init).map { $0 * 1000 }
    }

    public var isActive: Bool { socketPath != nil }

    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public func reloading() { send("RELOADING=1") }
    public func stopping() { send("STOPPING=1") }
    public func watchdog() { send("WATCHDOG=1") }
    public func status(_ text: String) { send("STATUS=\(text)") }

    private func send(_ message: String) {
        guard var path = socketPath else { return }
        // An abstract socket's name starts with '@', which stands for a NUL byte.
        let abstract = path.hasPrefix("@")
        if abstract { path.removeFirst() }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let nameBytes = Array(path.utf8)
        let offset = abstract ? 1 : 0
        let length = withUnsafeMutableBytes(of: &address.sun_path) { raw -> Int in
            let count = min(nameBytes.count, raw.count - 1 - offset)
            for i in 0..<count { raw[i + offset] = nameBytes[i] }
            return count + offset
        }
        let addressLength = socklen_t(MemoryLayout<sa_family_t>.size + length + (abstract ? 0 : 1))
        var bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, addressLength) }
        }
    }
}
