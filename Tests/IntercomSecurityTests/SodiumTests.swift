import IntercomCore
import IntercomSecurity
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
        #expect(Sodium.x25519(a.privateKey, b.publicKey) == Sodium.x25519(b.privateKey, a.publicKey))
        #expect(Sodium.x25519(a.privateKey, [UInt8](repeating: 0, count: 32)) == nil)
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
}

func hex(_ bytes: [UInt8]) -> String { Hexadecimal.encode(bytes) }
