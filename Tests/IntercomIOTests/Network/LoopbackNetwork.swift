import Glibc
import IntercomIO

/// What the machine's loopback offers, found without sending anything anywhere, and a
/// way to wait for datagrams.
enum LoopbackNetwork {
    /// Whether /etc/hosts maps the name localhost, so resolving it needs no DNS.
    static let hostsFileNamesLocalhost: Bool = {
        guard let file = fopen("/etc/hosts", "r") else { return false }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 1024)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
            if fields.first?.hasPrefix("#") == false, fields.dropFirst().contains("localhost") { return true }
        }
        return false
    }()

    /// Whether a socket can be bound to ::1 (IPv6 may be disabled in containers).
    static let hasIPv6: Bool = (try? UDPSocket(boundTo: .loopbackIPv6(port: 0))) != nil

    /// Receives datagrams on `socket` until `count` have arrived or `quietTimeoutNanoseconds`
    /// of silence pass.
    static func receive(
        _ count: Int, on socket: UDPSocket, quietTimeoutNanoseconds: UInt64 = 2_000_000_000
    ) throws -> [(bytes: [UInt8], from: SocketAddress)] {
        let poller = try Poller(watching: [socket])
        var buffer = [UInt8](repeating: 0, count: 2048)
        var received: [(bytes: [UInt8], from: SocketAddress)] = []
        while received.count < count {
            if let datagram = try socket.receive(into: &buffer) {
                received.append((Array(buffer[..<datagram.count]), datagram.from))
            } else if try poller.wait(timeoutNanoseconds: quietTimeoutNanoseconds).timedOut {
                break
            }
        }
        return received
    }

    /// Everything waiting on the socket now, without waiting: on loopback a datagram is
    /// queued at the receiver by the time sendto returns.
    static func drain(_ socket: UDPSocket) throws -> [(bytes: [UInt8], from: SocketAddress)] {
        var buffer = [UInt8](repeating: 0, count: 2048)
        var received: [(bytes: [UInt8], from: SocketAddress)] = []
        while let datagram = try socket.receive(into: &buffer) {
            received.append((Array(buffer[..<datagram.count]), datagram.from))
        }
        return received
    }
}
