import IntercomCore
import Testing

@Suite struct OutgoingStreamTests {
    struct Fixed: RandomNumberGenerator {
        var value: UInt64
        mutating func next() -> UInt64 { value }
    }

    @Test func numbersPacketsAndMarksTalkspurts() {
        var generator = Fixed(value: UInt64.max)  // starts both counters at their maximum: wraps at once
        var stream = OutgoingStream(using: &generator)
        let first = stream.nextFrame(samples: 480, send: true, payloadBytes: 40)!
        let second = stream.nextFrame(samples: 480, send: true, payloadBytes: 40)!
        #expect(first.marker && !second.marker)
        #expect(second.sequenceNumber == first.sequenceNumber &+ 1)
        #expect(second.timestamp == first.timestamp &+ 480)
        // Two silent frames: no packets, but the timestamp keeps running.
        #expect(stream.nextFrame(samples: 480, send: false, payloadBytes: 0) == nil)
        #expect(stream.nextFrame(samples: 480, send: false, payloadBytes: 0) == nil)
        let resumed = stream.nextFrame(samples: 480, send: true, payloadBytes: 40)!
        #expect(resumed.marker)
        #expect(resumed.sequenceNumber == second.sequenceNumber &+ 1)
        #expect(resumed.timestamp == second.timestamp &+ 3 * 480)
        #expect(stream.packetCount == 3 && stream.octetCount == 120)
        // The low-delay and robust encoders take turns: each frame advances by its own length.
        let short = stream.nextFrame(samples: 240, send: true, payloadBytes: 20)!
        let long = stream.nextFrame(samples: 480, send: true, payloadBytes: 40)!
        #expect(short.timestamp == resumed.timestamp &+ 480 && long.timestamp == short.timestamp &+ 240)
        #expect(!short.marker && !long.marker)
    }
}

@Suite struct PeerTableTests {
    @Test func learnedPeersExpireConfiguredOnesStay() {
        var table = PeerTable<String>(keepaliveTimeout: 5_000, capacity: 3)
        table.add("a", origin: .configured)
        let admitted = table.heard(from: "b", now: 1_000)
        #expect(admitted)
        #expect(table.peers["b"]?.origin == .learned)
        let early = table.expire(now: 5_000)
        let late = table.expire(now: 6_001)
        #expect(early.isEmpty)
        #expect(late.map(\.address) == ["b"])
        #expect(table.addresses == ["a"])
    }

    @Test func strangersBeyondCapacityAreRefusedWhileTheOthersTalk() {
        var table = PeerTable<Int>(capacity: 2)
        let verdicts = [table.heard(from: 1, now: 0), table.heard(from: 2, now: 0), table.heard(from: 3, now: 0)]
        #expect(verdicts == [true, true, false])
        #expect(table.peers.count == 2)
    }

    @Test func aNewPeerTakesTheQuietestLearnedPlaceButNeverANamedOne() {
        let second: UInt64 = 1_000_000_000
        var table = PeerTable<String>(keepaliveTimeout: 5 * second, capacity: 3)
        table.add("named", origin: .configured)
        table.heard(from: "stranger-1", now: 0)
        table.heard(from: "stranger-2", now: 0)
        table.heard(from: "stranger-1", now: 2 * second)
        // stranger-2 has been quiet for 2 s: the real peer takes its place.
        let admitted = table.heard(from: "real", now: 2 * second)
        #expect(admitted && table.peers["stranger-2"] == nil && table.peers["named"] != nil)
        #expect(table.takeEvicted() == ["stranger-2"] && table.takeEvicted().isEmpty)
        // Everyone learned has just been heard: the next stranger waits.
        let refused = table.heard(from: "stranger-3", now: 2 * second + 1)
        #expect(!refused && table.peers["real"] != nil)
    }

    @Test func goodbyeRemovesLearnedAndKeepsConfigured() {
        var table = PeerTable<String>()
        table.add("static", origin: .configured)
        table.heard(from: "learned", now: 0)
        table.update("static") { $0.ssrc = 7 }
        table.saidGoodbye("static")
        table.saidGoodbye("learned")
        #expect(table.peers["static"] != nil && table.peers["static"]?.ssrc == nil)
        #expect(table.peers["learned"] == nil)
    }
}

@Suite struct DiscoveredPeerTests {
    @Test func aDiscoveredPeerThatNeverAnswersOrFallsSilentIsDropped() {
        var table = PeerTable<String>(keepaliveTimeout: 5_000)
        table.add("quiet", origin: .discovered, now: 1_000)
        table.add("talker", origin: .discovered, now: 1_000)
        table.heard(from: "talker", now: 5_000)
        let first = table.expire(now: 6_500)
        #expect(first.map(\.address) == ["quiet"])
        let second = table.expire(now: 10_001)
        #expect(second.map(\.address) == ["talker"])
    }
}

@Suite struct PeerOriginTests {
    @Test func discoveryNamesAPeerThatReachedUsFirst() {
        var table = PeerTable<String>()
        table.heard(from: "bob", now: 0)
        table.add("bob", origin: .discovered, now: 1)
        #expect(table.peers["bob"]?.origin == .discovered)
        table.saidGoodbye("bob")
        #expect(table.peers["bob"] == nil)
    }
}
