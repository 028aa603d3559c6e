import IntercomIO
import Testing

@Suite struct SPSCRingTests {
    @Test func fullRingRefusesAndEmptyRingReturnsNil() {
        let ring = SPSCRing<Int>(capacity: 2)
        #expect(ring.pop() == nil)
        #expect(ring.push(1))
        #expect(ring.push(2))
        #expect(ring.push(3) == false)
        #expect(ring.pop() == 1)
        #expect(ring.push(3))
        #expect(ring.pop() == 2)
        #expect(ring.pop() == 3)
        #expect(ring.pop() == nil)
    }

    @Test func everyElementCrossesThreadsOnceInOrder() throws {
        let ring = SPSCRing<Int>(capacity: 64)
        let total = 200_000
        let producer = try JoinableThread(name: "producer") {
            var next = 0
            while next < total { if ring.push(next) { next += 1 } }
        }
        var expected = 0
        while expected < total {
            if let value = ring.pop() {
                #expect(value == expected)
                if value != expected { break }
                expected += 1
            }
        }
        producer.join()
        #expect(expected == total)
    }
}
