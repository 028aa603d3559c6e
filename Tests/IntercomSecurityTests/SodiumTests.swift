import IntercomCore
@testable import IntercomSecurity
import Testing

@Suite("libsodium primitives")
struct SodiumTests {
    @Test func sha256OfABCMatchesFIPS180() {
        #expect(hex(Sodium.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hmacSHA256MatchesRFC4231Case2() {
        let mac = Sodium.hmacSHA256(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func x25519AgreesBothWaysAndRefusesLowOrderPoints() {
        let a = Sodium.x25519KeyPair(), b = Sodium.x25519KeyPair()
        func shared(_ privateKey: SecretBytes, _ publicKey: [UInt8]) -> [UInt8]? {
            Sodium.withScratch(32) { Sodium.x25519(privateKey, publicKey, into: $0) ? Array($0) : nil }
        }
        #expect(shared(a.privateKey, b.publicKey) != nil && shared(a.privateKey, b.publicKey) == shared(b.privateKey, a.publicKey))
        #expect(shared(a.privateKey, [UInt8](repeating: 0, count: 32)) == nil)
    }

    @Test func aeadRejectsAnyFlippedBitAndAnotherCounter() {
        let key = Sodium.randomBytes(32)
        let sealed = Sodium.seal(key: key, counter: 7, associatedData: [1, 2], plaintext: Array("hello".utf8))
        #expect(Sodium.open(key: key, counter: 7, associatedData: [1, 2], ciphertext: sealed) == Array("hello".utf8))
        #expect(Sodium.open(key: key, counter: 8, associatedData: [1, 2], ciphertext: sealed) == nil)
        #expect(Sodium.open(key: key, counter: 7, associatedData: [1, 3], ciphertext: sealed) == nil)
        for bit in 0..<(sealed.count * 8) {
            var tampered = sealed
            tampered[bit / 8] ^= 1 << (bit % 8)
            #expect(Sodium.open(key: key, counter: 7, associatedData: [1, 2], ciphertext: tampered) == nil)
        }
    }

    @Test func aDatagramSealedInPlaceOpensFromWithinALargerBufferAndItsHeaderIsAuthenticated() {
        let key = Sodium.randomBytes(32)
        let header: [UInt8] = [4, 1, 0, 0, 9, 9, 9, 9]
        // A kept buffer that held a longer datagram before: its old bytes must not leak into the new one.
        var datagram = [UInt8](repeating: 0xEE, count: 300)
        datagram.removeAll(keepingCapacity: true)
        datagram += header
        Sodium.seal(key: key, counter: 3, plaintext: Array("hello".utf8), appendingTo: &datagram)
        #expect(datagram == header + Sodium.seal(key: key, counter: 3, associatedData: header, plaintext: Array("hello".utf8)))
        // As the network loop reads it: a slice of its receive buffer, not starting at zero.
        let received = [0x55, 0x55] + datagram + [0x55]
        let slice = received[2..<(2 + datagram.count)]
        #expect(Sodium.open(key: key, counter: 3, datagram: slice, associatedCount: header.count) == Array("hello".utf8))
        var otherHeader = received
        otherHeader[3] ^= 1
        #expect(Sodium.open(key: key, counter: 3, datagram: otherHeader[2..<(2 + datagram.count)], associatedCount: header.count) == nil)
        #expect(Sodium.open(key: key, counter: 3, datagram: slice.prefix(header.count + 15), associatedCount: header.count) == nil)
        // Opened into a kept buffer: the plaintext alone, and nothing at all when the tag fails.
        var plaintext: [UInt8] = Array(repeating: 0xEE, count: 64)
        #expect(Sodium.open(key: key, counter: 3, datagram: slice, associatedCount: header.count, into: &plaintext))
        #expect(plaintext == Array("hello".utf8))
        #expect(!Sodium.open(key: key, counter: 4, datagram: slice, associatedCount: header.count, into: &plaintext))
        #expect(plaintext.isEmpty)
    }
}

func hex(_ bytes: [UInt8]) -> String { Hexadecimal.encode(bytes) }
