import IntercomCore
import IntercomSecurity
import Testing

@Suite("Pairing by a short code")
struct PairingExchangeTests {
    let joiner = Sodium.x25519KeyPair().publicKey
    let waiter = Sodium.x25519KeyPair().publicKey
    let later: UInt64 = 1_000_000_000_000

    /// Runs one exchange to the end; returns what each side ended with.
    func run(joinerCode: String, responder: inout PairingResponder) -> (PairingInitiator.Event, PairingResponder.Event) {
        var initiator = PairingInitiator(code: joinerCode, staticKey: joiner, name: "laptop")
        guard case .send(let reply) = responder.receive(initiator.hello[...], now: 1) else { return (.ignored, .ignored) }
        #expect(reply.count <= initiator.hello.count, "a reply is never longer than the hello")
        guard case .send(let confirm) = initiator.receive(reply[...]) else { return (.ignored, .ignored) }
        let responderEnd = responder.receive(confirm[...], now: 2)
        switch responderEnd {
        case .paired(_, let answer), .wrongCode(let answer, _):
            return (initiator.receive(answer[...]), responderEnd)
        default:
            return (.ignored, responderEnd)
        }
    }

    @Test func theRightCodePairsBothWaysWithEachOthersKeys() {
        var responder = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: later)
        let (joined, waited) = run(joinerCode: "482913", responder: &responder)
        #expect(joined == .paired(PairedDevice(publicKey: waiter, name: "door pi")))
        guard case .paired(let device, _) = waited else {
            Issue.record("the waiting device did not pair: \(waited)")
            return
        }
        #expect(device == PairedDevice(publicKey: joiner, name: "laptop"))
    }

    @Test func aWrongCodeFailsOnBothSidesAndTheFourthTryIsRefused() {
        var responder = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: later)
        for attempt in 1...3 {
            let (joined, waited) = run(joinerCode: "000000", responder: &responder)
            #expect(joined == .wrongCode)
            guard case .wrongCode(_, let left) = waited else {
                Issue.record("attempt \(attempt): \(waited)")
                continue
            }
            #expect(left == 3 - attempt)
        }
        #expect(responder.isExhausted)
        let initiator = PairingInitiator(code: "482913", staticKey: joiner, name: "laptop")
        #expect(responder.receive(initiator.hello[...], now: 3) == .codeExhausted, "even the right code is refused now")
    }

    /// The confirmation lost on its way, then the answer lost on its way back: the joiner sends
    /// what it has not had an answer to again, and the waiting device answers a repeat as it
    /// answered the first, without counting it as another attempt.
    @Test(arguments: ["482913", "000000"]) func aLostConfirmationOrAnswerIsSentAgainUntilAnswered(joinerCode: String) throws {
        var responder = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: later)
        var initiator = PairingInitiator(code: joinerCode, staticKey: joiner, name: "laptop")
        #expect(initiator.outgoing == initiator.hello)
        guard case .send(let reply) = responder.receive(initiator.outgoing[...], now: 1) else { throw Unexpected() }
        guard case .send(let confirm) = initiator.receive(reply[...]) else { throw Unexpected() }
        // The first confirmation is lost: the joiner's retry sends it again.
        #expect(initiator.outgoing == confirm)
        let first = responder.receive(initiator.outgoing[...], now: 2)
        let answer: [UInt8]
        switch first {
        case .paired(_, let reply) where joinerCode == "482913": answer = reply
        case .wrongCode(let reply, 2) where joinerCode != "482913": answer = reply
        default: throw Unexpected()
        }
        // The answer is lost: the joiner still sends its confirmation, and gets the same answer,
        // again and again, even once the code has expired.
        #expect(initiator.outgoing == confirm)
        for retry in 0..<3 {
            #expect(responder.receive(initiator.outgoing[...], now: later + UInt64(retry)) == .send(answer))
        }
        #expect(responder.wrongAttempts == (joinerCode == "482913" ? 0 : 1))
        #expect(initiator.receive(answer[...]) == (joinerCode == "482913" ? .paired(PairedDevice(publicKey: waiter, name: "door pi")) : .wrongCode))
        // A confirmation with another tag for the ended exchange is no repeat: not answered.
        var forged = confirm
        forged[forged.count - 1] ^= 1
        #expect(responder.receive(forged[...], now: 3) == .ignored)
    }

    struct Unexpected: Error {}

    /// A device is never paired with its own key: a hello or a reply carrying it (our own sent
    /// back to us, or a device that shares our state directory) is not answered.
    @Test func ownKeyIsNeverPaired() {
        var responder = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: later)
        let ownHello = PairingInitiator(code: "482913", staticKey: waiter, name: "door pi")
        #expect(responder.receive(ownHello.hello[...], now: 1) == .ignored && responder.halfOpenCount == 0)
        var initiator = PairingInitiator(code: "482913", staticKey: joiner, name: "laptop")
        var mirror = PairingResponder(code: "482913", staticKey: joiner, name: "laptop", deadline: later)
        var other = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: later)
        // The joiner's hello to a device with its own key draws a reply the joiner ignores.
        #expect(mirror.receive(initiator.hello[...], now: 1) == .ignored)
        // A reply with the joiner's own key, made up by whoever read the hello, is ignored too,
        // and the real device's reply is still taken.
        let reflected = PairingMessage.reply(session: initiator.session, share: Array(initiator.hello[20..<52]), staticKey: joiner, name: "laptop").serialized()
        #expect(initiator.receive(reflected[...]) == .ignored)
        guard case .send(let reply) = other.receive(initiator.hello[...], now: 1) else {
            Issue.record("the other device did not answer")
            return
        }
        guard case .send = initiator.receive(reply[...]) else {
            Issue.record("the real reply was not taken")
            return
        }
    }

    @Test func anExpiredCodeAnswersNothing() {
        var responder = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: 100)
        let initiator = PairingInitiator(code: "482913", staticKey: joiner, name: "laptop")
        #expect(responder.receive(initiator.hello[...], now: 100) == .codeExhausted)
    }

    @Test func aRepeatedHelloGetsTheSameReplyAndHalfOpenExchangesAreCapped() {
        var responder = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: later)
        let initiator = PairingInitiator(code: "482913", staticKey: joiner, name: "laptop")
        let first = responder.receive(initiator.hello[...], now: 1)
        #expect(responder.receive(initiator.hello[...], now: 2) == first)
        for index in 0..<100 {
            let other = PairingInitiator(code: "\(index)", staticKey: joiner, name: "x")
            _ = responder.receive(other.hello[...], now: UInt64(3 + index))
        }
        #expect(responder.halfOpenCount == PairingResponder.maximumHalfOpen)
        #expect(responder.wrongAttempts == 0, "hellos alone cost no attempts")
    }

    @Test func aSecondReplyIsIgnoredSoItCannotBuyAnotherGuess() {
        var responder = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: later)
        var impostor = PairingResponder(code: "111111", staticKey: waiter, name: "door pi", deadline: later)
        var initiator = PairingInitiator(code: "482913", staticKey: joiner, name: "laptop")
        guard case .send(let reply) = responder.receive(initiator.hello[...], now: 1),
              case .send(let forged) = impostor.receive(initiator.hello[...], now: 1) else {
            Issue.record("no replies")
            return
        }
        guard case .send = initiator.receive(reply[...]) else {
            Issue.record("the genuine reply was not confirmed")
            return
        }
        #expect(initiator.receive(forged[...]) == .ignored)
    }

    @Test func hostileMessagesAreRejectedWithoutCrashing() {
        var responder = PairingResponder(code: "482913", staticKey: waiter, name: "door pi", deadline: later)
        var initiator = PairingInitiator(code: "482913", staticKey: joiner, name: "laptop")
        let hello = initiator.hello
        var cases: [[UInt8]] = [[], [0x21], Array(hello.prefix(20)), Array(hello.prefix(hello.count - 1)), hello + [0]]
        var lying = hello
        lying[20 + 64] = 200  // a name longer than the message
        cases.append(lying)
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<3_000 {
            var bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if bytes.count > 4 { bytes[0] = UInt8.random(in: 0x21...0x25, using: &generator); bytes[1] = 1; bytes[2] = 0; bytes[3] = 0 }
            cases.append(bytes)
        }
        for bytes in cases {
            switch responder.receive(bytes[...], now: 1) {
            case .paired: Issue.record("random bytes paired")
            case .wrongCode: Issue.record("random bytes cost an attempt without a hello")
            default: break
            }
            if case .paired = initiator.receive(bytes[...]) { Issue.record("random bytes paired the initiator") }
        }
        #expect(makePairingCode().count == 6 && makePairingCode().allSatisfy(\.isNumber))
    }
}
