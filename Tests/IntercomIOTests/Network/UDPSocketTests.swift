import Glibc
import IntercomIO
import SystemPackage
import Testing

@Suite("UDP sockets")
struct UDPSocketTests {
    @Test func exchangesDatagramsOverIPv4Loopback() throws {
        let first = try UDPSocket()
        let second = try UDPSocket()
        #expect(first.localPort != 0 && first.localPort != second.localPort)

        try first.send([1, 2, 3], to: .loopbackIPv4(port: second.localPort))
        let atSecond = try LoopbackNetwork.receive(1, on: second)
        #expect(atSecond.map(\.bytes) == [[1, 2, 3]])
        // The dual-stack socket reports the IPv4 sender as plain IPv4, ready to reply to.
        #expect(atSecond.first?.from == .loopbackIPv4(port: first.localPort))

        try second.send([4, 5], to: try #require(atSecond.first?.from))
        #expect(try LoopbackNetwork.receive(1, on: first).map(\.bytes) == [[4, 5]])
    }

    @Test(.enabled(if: LoopbackNetwork.hasIPv6, "IPv6 loopback ::1 is unavailable on this machine"))
    func exchangesDatagramsOverIPv6Loopback() throws {
        let first = try UDPSocket()
        let second = try UDPSocket()
        try first.send([6, 7, 8], to: .loopbackIPv6(port: second.localPort))
        let atSecond = try LoopbackNetwork.receive(1, on: second)
        #expect(atSecond.map(\.bytes) == [[6, 7, 8]])
        #expect(atSecond.first?.from == .loopbackIPv6(port: first.localPort))
    }

    @Test func socketsBoundToIPv4LoopbackTalkToDualStackOnes() throws {
        let loopbackOnly = try UDPSocket(boundTo: .loopbackIPv4(port: 0))
        let dualStack = try UDPSocket()
        #expect(loopbackOnly.localAddress == .loopbackIPv4(port: loopbackOnly.localPort))
        try loopbackOnly.send([9], to: .loopbackIPv4(port: dualStack.localPort))
        #expect(try LoopbackNetwork.receive(1, on: dualStack).first?.from == loopbackOnly.localAddress)
    }

    @Test func refusesAPortInUseClearly() throws {
        let holder = try UDPSocket()
        #expect(throws: NetworkError.portInUse(holder.localPort)) { try UDPSocket(port: holder.localPort) }
        #expect(NetworkError.portInUse(holder.localPort).description == "port \(holder.localPort) is in use")

        let loopbackHolder = try UDPSocket(boundTo: .loopbackIPv4(port: 0))
        #expect(throws: NetworkError.portInUse(loopbackHolder.localPort)) {
            try UDPSocket(boundTo: .loopbackIPv4(port: loopbackHolder.localPort))
        }
    }

    @Test func aLoopThatRemembersItsSendersStillTellsEverySenderApart() throws {
        let receiver = try UDPSocket()
        let senders = try (0..<3).map { _ in try UDPSocket() }
        // Room for two: the third sender pushes the oldest out, and each comes back right.
        var remembered = SenderAddressCache(capacity: 2)
        var buffer = [UInt8](repeating: 0, count: 16)
        for round in 0..<3 {
            for (index, sender) in senders.enumerated() {
                try sender.send([UInt8(index), UInt8(round)], to: .loopbackIPv4(port: receiver.localPort))
                var received: (count: Int, from: SocketAddress)?
                for _ in 0..<200 where received == nil {
                    received = try receiver.receive(into: &buffer, senders: &remembered)
                    if received == nil { usleep(5_000) }
                }
                let datagram = try #require(received)
                #expect(Array(buffer[0..<datagram.count]) == [UInt8(index), UInt8(round)])
                #expect(datagram.from == .loopbackIPv4(port: sender.localPort))
            }
        }
    }

    @Test func receivingWithNothingWaitingReturnsNil() throws {
        let socket = try UDPSocket()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try socket.receive(into: &buffer) == nil)
    }

    @Test func reportsDatagramsLargerThanTheBuffer() throws {
        let sender = try UDPSocket()
        let receiver = try UDPSocket()
        try sender.send(Array(repeating: 1, count: 100), to: .loopbackIPv4(port: receiver.localPort))
        try sender.send([2], to: .loopbackIPv4(port: receiver.localPort))
        _ = try Poller(watching: [receiver]).wait(timeoutNanoseconds: 2_000_000_000)
        var small = [UInt8](repeating: 0, count: 10)
        #expect(throws: NetworkError.datagramTooLarge(byteCount: 100, bufferSize: 10)) {
            try receiver.receive(into: &small)
        }
        // The next datagram is unaffected.
        #expect(try LoopbackNetwork.receive(1, on: receiver).map(\.bytes) == [[2]])
    }

    @Test func anIPv4SocketCannotReachIPv6() throws {
        let socket = try UDPSocket(boundTo: .loopbackIPv4(port: 0))
        let destination = SocketAddress.loopbackIPv6(port: 9)
        #expect(throws: NetworkError.ipv6Unavailable(destination: destination)) { try socket.send([1], to: destination) }
    }

    @Test func systemCallErrorsCarryTheSystemsText() {
        let error = NetworkError.systemCall(operation: "sendto 127.0.0.1:9", errno: .networkUnreachable)
        #expect(error.description == "sendto 127.0.0.1:9 failed: Network is unreachable (errno 101)")
    }
}
