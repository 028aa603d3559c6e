import Glibc
import IntercomCore
import IntercomIO
import Testing

@Suite("Impairment relay")
struct ImpairmentRelayTests {
    /// Two peers on loopback and a relay between them that knows where B is.
    struct Setup {
        let peerA: UDPSocket
        let peerB: UDPSocket
        let relay: ImpairmentRelay

        init(aToB: ImpairmentProfile = .clean, bToA: ImpairmentProfile = .clean, knowsB: Bool = true) throws {
            peerA = try UDPSocket(boundTo: .loopbackIPv4(port: 0))
            peerB = try UDPSocket(boundTo: .loopbackIPv4(port: 0))
            relay = try ImpairmentRelay(ImpairmentRelay.Configuration(
                peerB: knowsB ? peerB.localAddress : nil, aToB: aToB, bToA: bToA))
        }
    }

    /// A datagram numbered `index`, so receivers can tell which ones arrived.
    static func datagram(_ index: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index), 0xAB, 0xCD]
    }

    static func index(of datagram: [UInt8]) -> Int {
        Int(datagram[0]) << 8 | Int(datagram[1])
    }

    /// Sends `count` numbered datagrams in batches small enough for the socket buffers,
    /// waiting after each batch until the relay has dealt with all of it.
    static func send(
        _ count: Int, from sender: UDPSocket, to address: SocketAddress,
        through relay: ImpairmentRelay, direction: ImpairmentRelay.Direction
    ) throws {
        let alreadyReceived = relay.counters(direction).received
        for batchStart in stride(from: 0, to: count, by: 100) {
            for index in batchStart..<min(batchStart + 100, count) {
                try sender.send(datagram(index), to: address)
            }
            try waitUntilSettled(relay, direction, received: alreadyReceived + min(batchStart + 100, count))
        }
    }

    /// Waits until the relay has received `received` datagrams in the direction and has
    /// nothing of them left in flight.
    static func waitUntilSettled(_ relay: ImpairmentRelay, _ direction: ImpairmentRelay.Direction, received: Int) throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let counters = relay.counters(direction)
            let handled = counters.forwarded + counters.unroutable + counters.socketErrors
            if counters.received == received && handled == counters.received - counters.dropped + counters.duplicated {
                return
            }
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
        }
        Issue.record("relay did not settle: \(relay.counters(direction)), expected \(received) received")
    }

    @Test func aCleanProfileForwardsEverythingBothWays() throws {
        let setup = try Setup()
        defer { setup.relay.stop() }

        try Self.send(300, from: setup.peerA, to: setup.relay.sideAAddress, through: setup.relay, direction: .aToB)
        let atB = try LoopbackNetwork.drain(setup.peerB)
        #expect(atB.map { Self.index(of: $0.bytes) } == Array(0..<300))
        // B sees the relay's side-B socket as its peer and replies there.
        #expect(Set(atB.map(\.from)) == [setup.relay.sideBAddress])

        try Self.send(300, from: setup.peerB, to: setup.relay.sideBAddress, through: setup.relay, direction: .bToA)
        let atA = try LoopbackNetwork.drain(setup.peerA)
        #expect(atA.map { Self.index(of: $0.bytes) } == Array(0..<300))
        #expect(Set(atA.map(\.from)) == [setup.relay.sideAAddress])

        for direction in ImpairmentRelay.Direction.allCases {
            #expect(setup.relay.counters(direction) == ImpairmentRelay.Counters(
                received: 300, forwarded: 300, dropped: 0, duplicated: 0, unroutable: 0, socketErrors: 0))
        }
    }

    @Test func tenPercentLossDropsAboutTenPercent() throws {
        let setup = try Setup(aToB: ImpairmentProfile(lossPercent: 10, seed: 77))
        defer { setup.relay.stop() }

        try Self.send(2000, from: setup.peerA, to: setup.relay.sideAAddress, through: setup.relay, direction: .aToB)
        let arrived = try LoopbackNetwork.drain(setup.peerB).count
        let counters = setup.relay.counters(.aToB)
        #expect((170...230).contains(2000 - arrived), "lost \(2000 - arrived) of 2000")
        #expect(counters.dropped == 2000 - arrived)
        #expect(counters.forwarded == arrived)
    }

    @Test func aDelayProfileDelaysByAboutTheDelay() throws {
        let delay: UInt64 = 80_000_000
        let setup = try Setup(aToB: ImpairmentProfile(baseDelayNanoseconds: delay))
        defer { setup.relay.stop() }

        let start = ContinuousClock.now
        for index in 0..<10 {
            try setup.peerA.send(Self.datagram(index), to: setup.relay.sideAAddress)
        }
        let arrived = try LoopbackNetwork.receive(10, on: setup.peerB)
        let elapsed = ContinuousClock.now - start
        #expect(arrived.count == 10)
        // Each datagram is held from its arrival at the relay, which follows the send.
        #expect(elapsed >= .nanoseconds(Int64(delay)))
        // Generous: a loaded two-core machine may run the relay thread late.
        #expect(elapsed < .nanoseconds(Int64(delay)) + .milliseconds(500))
    }

    @Test func learnsPeerBFromItsFirstDatagram() throws {
        let setup = try Setup(knowsB: false)
        defer { setup.relay.stop() }

        try Self.send(5, from: setup.peerA, to: setup.relay.sideAAddress, through: setup.relay, direction: .aToB)
        #expect(setup.relay.counters(.aToB).unroutable == 5)

        try Self.send(1, from: setup.peerB, to: setup.relay.sideBAddress, through: setup.relay, direction: .bToA)
        #expect(try LoopbackNetwork.drain(setup.peerA).count == 1)
        try Self.send(5, from: setup.peerA, to: setup.relay.sideAAddress, through: setup.relay, direction: .aToB)
        #expect(try LoopbackNetwork.drain(setup.peerB).count == 5)
    }

    @Test func duplicatesAndSeparateSeedsPerDirection() throws {
        let profile = ImpairmentProfile(lossPercent: 20, duplicatePercent: 20, seed: 5)
        let setup = try Setup(aToB: profile, bToA: profile)
        defer { setup.relay.stop() }

        try Self.send(500, from: setup.peerA, to: setup.relay.sideAAddress, through: setup.relay, direction: .aToB)
        try Self.send(500, from: setup.peerB, to: setup.relay.sideBAddress, through: setup.relay, direction: .bToA)
        let aToB = setup.relay.counters(.aToB)
        let bToA = setup.relay.counters(.bToA)
        #expect(try LoopbackNetwork.drain(setup.peerB).count == aToB.forwarded)
        #expect(aToB.forwarded == 500 - aToB.dropped + aToB.duplicated)
        #expect(aToB.duplicated > 40)
        // Same profile, same seed, yet the two directions must not lose the same packets.
        #expect((aToB.dropped, aToB.duplicated) != (bToA.dropped, bToA.duplicated))
    }

    @Test func stopEndsRelayingAndCanBeRepeated() throws {
        let setup = try Setup()
        setup.relay.stop()
        setup.relay.stop()
        try setup.peerA.send([1], to: setup.relay.sideAAddress)
        #expect(try LoopbackNetwork.receive(1, on: setup.peerB, quietTimeoutNanoseconds: 100_000_000).isEmpty)
        #expect(setup.relay.counters(.aToB).received == 0)
    }
}
