import IntercomIO
import Testing

@Suite("Recycling ring")
struct RecyclingRingTests {
    @Test func startsWithASpareForEverySlot() {
        var made = 0
        let ring = RecyclingRing<[UInt8]>(capacity: 4) {
            made += 1
            return [UInt8](repeating: 0, count: 1)
        }
        #expect(made == 4)
        var spares = 0
        while ring.reusable() != nil { spares += 1 }
        #expect(spares == 4)
    }

    @Test func elementsGoAcrossInOrderAndComeBackToBeFilledAgain() {
        let ring = RecyclingRing<[UInt8]>(capacity: 2) { [] }
        for value: UInt8 in 1...3 {
            var buffer = ring.reusable() ?? []
            buffer = [value]
            #expect(ring.push(buffer) == (value <= 2), "a full ring refuses")
        }
        #expect(ring.count == 2)
        let first = ring.pop()
        #expect(first == [1])
        ring.giveBack(first!)
        #expect(ring.pop() == [2])
        #expect(ring.pop() == nil)
        #expect(ring.reusable() == [1], "what was given back is handed out to be filled again")
    }
}
