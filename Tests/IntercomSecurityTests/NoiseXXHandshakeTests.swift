import IntercomCore
import IntercomSecurity
import Testing

@Suite("Noise XX handshake")
struct NoiseXXHandshakeTests {
    /// The published cacophony vector for Noise_XX_25519_ChaChaPoly_SHA256.
    enum Vector {
        static let prologue = "4a6f686e2047616c74"
        static let initiatorStatic = "e61ef9919cde45dd5f82166404bd08e38bceb5dfdfded0a34c8df7ed542214d1"
        static let initiatorEphemeral = "893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a"
        static let responderStatic = "4a3acbfdb163dec651dfa3194dece676d437029c62a408b4c5ea9114246e4893"
        static let responderEphemeral = "bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b"
        static let handshakeHash = "c8e5f64e846193be2a834104c2a009868d6c9f3bd3c186299888b488b2f1f58e"
        static let messages: [(payload: String, ciphertext: String)] = [
            ("4c756477696720766f6e204d69736573",
             "ca35def5ae56cec33dc2036731ab14896bc4c75dbb07a61f879f8e3afa4c79444c756477696720766f6e204d69736573"),
            ("4d757272617920526f746862617264",
             "95ebc60d2b1fa672c1f46a8aa265ef51bfe38e7ccb39ec5be34069f14480884381cbad1f276e038c48378ffce2b65285e08d6b68aaa3629a5a8639392490e5b9bd5269c2f1e4f488ed8831161f19b7815528f8982ffe09be9b5c412f8a0db50f8814c7194e83f23dbd8d162c9326ad"),
            ("462e20412e20486179656b",
             "c7195ffacac1307ff99046f219750fc47693e23c3cb08b89c2af808b444850a80ae475b9df0f169ae80a89be0865b57f58c9fea0d4ec82a286427402f113e4b6ae769a1d95941d49b25030"),
            ("4361726c204d656e676572", "96763ed773f8e47bb3712f0e29b3060ffc956ffc146cee53d5e1df"),
            ("4a65616e2d426170746973746520536179", "3e40f15f6f3a46ae446b253bf8b1d9ffb6ed9b174d272328ff91a7e2e5c79c07f5"),
        ]
    }

    static func bytes(_ text: String) -> [UInt8] { Hexadecimal.decode(text)! }

    func vectorPair() -> (initiator: NoiseXXHandshake, responder: NoiseXXHandshake) {
        let prologue = Self.bytes(Vector.prologue)
        return (
            NoiseXXHandshake(role: .initiator, staticPrivateKey: SecretBytes(copying: Self.bytes(Vector.initiatorStatic)), prologue: prologue,
                             ephemeralPrivateKey: Self.bytes(Vector.initiatorEphemeral)),
            NoiseXXHandshake(role: .responder, staticPrivateKey: SecretBytes(copying: Self.bytes(Vector.responderStatic)), prologue: prologue,
                             ephemeralPrivateKey: Self.bytes(Vector.responderEphemeral))
        )
    }

    @Test func reproducesThePublishedVector() throws {
        var (initiator, responder) = vectorPair()
        let m = Vector.messages
        let first = try initiator.writeMessage(payload: Self.bytes(m[0].payload))
        #expect(Hexadecimal.encode(first) == m[0].ciphertext)
        #expect(try responder.readMessage(first) == Self.bytes(m[0].payload))
        let second = try responder.writeMessage(payload: Self.bytes(m[1].payload))
        #expect(Hexadecimal.encode(second) == m[1].ciphertext)
        #expect(try initiator.readMessage(second) == Self.bytes(m[1].payload))
        let third = try initiator.writeMessage(payload: Self.bytes(m[2].payload))
        #expect(Hexadecimal.encode(third) == m[2].ciphertext)
        #expect(try responder.readMessage(third) == Self.bytes(m[2].payload))

        #expect(Hexadecimal.encode(initiator.handshakeHash) == Vector.handshakeHash)
        #expect(responder.handshakeHash == initiator.handshakeHash)
        #expect(initiator.remoteStaticKey == Sodium.x25519PublicKey(Self.bytes(Vector.responderStatic)))
        #expect(responder.remoteStaticKey == Sodium.x25519PublicKey(Self.bytes(Vector.initiatorStatic)))

        // Transport messages go on alternating, each direction's nonce from 0, no associated data.
        let initiatorKeys = try #require(initiator.transportKeys())
        let responderKeys = try #require(responder.transportKeys())
        #expect(initiatorKeys.sending == responderKeys.receiving && initiatorKeys.receiving == responderKeys.sending)
        let fromResponder = Sodium.seal(key: responderKeys.sending, counter: 0, associatedData: [], plaintext: Self.bytes(m[3].payload))
        #expect(Hexadecimal.encode(fromResponder) == m[3].ciphertext)
        let fromInitiator = Sodium.seal(key: initiatorKeys.sending, counter: 0, associatedData: [], plaintext: Self.bytes(m[4].payload))
        #expect(Hexadecimal.encode(fromInitiator) == m[4].ciphertext)
    }

    @Test func aTamperedSecondMessageIsRefusedAndLeavesTheInitiatorWaiting() throws {
        var (initiator, responder) = vectorPair()
        _ = try responder.readMessage(initiator.writeMessage())
        let second = try responder.writeMessage()
        for index in [0, 40, second.count - 1] {
            var tampered = second
            tampered[index] ^= 0x01
            #expect(throws: NoiseXXHandshake.Failure.self) { try initiator.readMessage(tampered) }
        }
        #expect(throws: NoiseXXHandshake.Failure.malformed) { try initiator.readMessage(Array(second.prefix(40))) }
        // The genuine message still completes: a forgery does not spoil the handshake.
        _ = try initiator.readMessage(second)
        _ = try responder.readMessage(initiator.writeMessage())
        #expect(initiator.isFinished && responder.isFinished)
    }

    @Test func aThirdMessageFromAnotherKeyPairDoesNotFinish() throws {
        let prologue = Array("intercom".utf8)
        var initiator = NoiseXXHandshake(role: .initiator, staticPrivateKey: Sodium.x25519KeyPair().privateKey, prologue: prologue)
        var responder = NoiseXXHandshake(role: .responder, staticPrivateKey: Sodium.x25519KeyPair().privateKey, prologue: prologue)
        var stranger = NoiseXXHandshake(role: .initiator, staticPrivateKey: Sodium.x25519KeyPair().privateKey, prologue: prologue)
        _ = try stranger.writeMessage()
        _ = try responder.readMessage(initiator.writeMessage())
        let second = try responder.writeMessage()
        // The stranger cannot read a reply made for another ephemeral key.
        #expect(throws: NoiseXXHandshake.Failure.self) { try stranger.readMessage(second) }
        _ = try initiator.readMessage(second)
        #expect(!responder.isFinished)
        #expect(throws: NoiseXXHandshake.Failure.outOfTurn) { try responder.writeMessage() }
    }

    @Test func differentProloguesNeverAgree() throws {
        var initiator = NoiseXXHandshake(role: .initiator, staticPrivateKey: Sodium.x25519KeyPair().privateKey, prologue: [1])
        var responder = NoiseXXHandshake(role: .responder, staticPrivateKey: Sodium.x25519KeyPair().privateKey, prologue: [2])
        _ = try responder.readMessage(initiator.writeMessage())
        #expect(throws: NoiseXXHandshake.Failure.malformed) { try initiator.readMessage(responder.writeMessage()) }
    }
}
