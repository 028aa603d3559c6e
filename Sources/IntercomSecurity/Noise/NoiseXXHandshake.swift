/// The Noise XX handshake (Noise Protocol Framework rev. 34, §7.5), suite
/// Noise_XX_25519_ChaChaPoly_SHA256:
///
///     -> e
///     <- e, ee, s, es
///     -> s, se
///
/// XX lets each side learn the other's static key inside the handshake, so a call can be
/// started towards an address whose device is not yet known (`--peer HOST:PORT`); each side
/// then checks the key it learned against its trusted devices before any audio flows.
public struct NoiseXXHandshake: Sendable {
    public static let protocolName = "Noise_XX_25519_ChaChaPoly_SHA256"
    public static let keyLength = 32
    public static let tagLength = 16

    public enum Role: Sendable { case initiator, responder }

    public enum Failure: Error, Equatable {
        /// A message out of turn, or a handshake that already finished.
        case outOfTurn
        /// Too short, or a payload that does not decrypt.
        case malformed
        /// A public key that gives a low-order Diffie–Hellman result.
        case invalidKey
        /// Message 3 whose static key does not decrypt: it was not made by this handshake's
        /// initiator (only the two ends know the key it is sealed under, from both ephemeral
        /// keys), so the handshake may still finish with the initiator's own message 3.
        case foreign
    }

    public let role: Role
    private var state: NoiseSymmetricState
    /// Shared with the caller (the device's key, kept once for the process).
    private let staticPrivateKey: SecretBytes
    private let staticPublicKey: [UInt8]
    /// Freed, zeroed, with the last copy of this handshake.
    private let ephemeralPrivateKey: SecretBytes
    private var ephemeralPublicKey: [UInt8]
    private var remoteEphemeral: [UInt8]?
    /// The peer's static public key, once the handshake has revealed it.
    public private(set) var remoteStaticKey: [UInt8]?
    private var step = 0

    /// `ephemeralPrivateKey` is for test vectors only: a fresh one is drawn otherwise.
    /// `staticPublicKey`, when given, spares computing it again (it must be the private key's).
    public init(
        role: Role, staticPrivateKey: SecretBytes, staticPublicKey: [UInt8]? = nil, prologue: [UInt8],
        ephemeralPrivateKey: [UInt8]? = nil
    ) {
        self.role = role
        self.staticPrivateKey = staticPrivateKey
        self.staticPublicKey = staticPublicKey ?? Sodium.x25519PublicKey(staticPrivateKey)
        let ephemeral = ephemeralPrivateKey.map { SecretBytes(copying: $0) } ?? Sodium.x25519KeyPair().privateKey
        self.ephemeralPrivateKey = ephemeral
        ephemeralPublicKey = Sodium.x25519PublicKey(ephemeral)
        state = NoiseSymmetricState(protocolName: Self.protocolName)
        state.mixHash(prologue)
    }

    /// The handshake hash: the same on both sides once finished, a channel binding.
    public var handshakeHash: [UInt8] { state.handshakeHash }

    public var isFinished: Bool { step == 3 }

    /// The length of each message carrying a payload of `payloadLength` bytes.
    public static func messageLength(_ message: Int, payloadLength: Int) -> Int {
        switch message {
        case 1: keyLength + payloadLength
        case 2: keyLength + (keyLength + tagLength) + payloadLength + tagLength
        default: (keyLength + tagLength) + payloadLength + tagLength
        }
    }

    // MARK: Writing

    /// The next message this side sends, with `payload` (in the clear in the first message).
    public mutating func writeMessage(payload: [UInt8] = []) throws(Failure) -> [UInt8] {
        switch (role, step) {
        case (.initiator, 0):
            state.mixHash(ephemeralPublicKey)
            step = 1
            return ephemeralPublicKey + state.encryptAndHash(payload)
        case (.responder, 1):
            guard let remoteEphemeral else { throw .outOfTurn }
            state.mixHash(ephemeralPublicKey)
            try mixDH(ephemeralPrivateKey, remoteEphemeral)
            let sealedStatic = state.encryptAndHash(staticPublicKey)
            try mixDH(staticPrivateKey, remoteEphemeral)
            step = 2
            return ephemeralPublicKey + sealedStatic + state.encryptAndHash(payload)
        case (.initiator, 2):
            guard let remoteEphemeral else { throw .outOfTurn }
            let sealedStatic = state.encryptAndHash(staticPublicKey)
            try mixDH(staticPrivateKey, remoteEphemeral)
            step = 3
            return sealedStatic + state.encryptAndHash(payload)
        default:
            throw .outOfTurn
        }
    }

    // MARK: Reading

    /// Reads the other side's next message and returns its payload.
    public mutating func readMessage(_ message: [UInt8]) throws(Failure) -> [UInt8] {
        let sealedKeyLength = Self.keyLength + Self.tagLength
        switch (role, step) {
        case (.responder, 0):
            guard message.count >= Self.keyLength else { throw .malformed }
            let ephemeral = Array(message[0..<Self.keyLength])
            remoteEphemeral = ephemeral
            state.mixHash(ephemeral)
            guard let payload = state.decryptAndHash(Array(message[Self.keyLength...])) else { throw .malformed }
            step = 1
            return payload
        case (.initiator, 1):
            guard message.count >= Self.keyLength + sealedKeyLength + Self.tagLength else { throw .malformed }
            var trial = self
            let ephemeral = Array(message[0..<Self.keyLength])
            trial.remoteEphemeral = ephemeral
            trial.state.mixHash(ephemeral)
            try trial.mixDH(ephemeralPrivateKey, ephemeral)
            guard let remoteStatic = trial.state.decryptAndHash(Array(message[Self.keyLength..<(Self.keyLength + sealedKeyLength)])) else {
                throw .malformed
            }
            try trial.mixDH(ephemeralPrivateKey, remoteStatic)
            guard let payload = trial.state.decryptAndHash(Array(message[(Self.keyLength + sealedKeyLength)...])) else {
                throw .malformed
            }
            trial.remoteStaticKey = remoteStatic
            trial.step = 2
            self = trial
            return payload
        case (.responder, 2):
            guard message.count >= sealedKeyLength + Self.tagLength else { throw .malformed }
            var trial = self
            guard let remoteStatic = trial.state.decryptAndHash(Array(message[0..<sealedKeyLength])) else { throw .foreign }
            try trial.mixDH(ephemeralPrivateKey, remoteStatic)
            guard let payload = trial.state.decryptAndHash(Array(message[sealedKeyLength...])) else { throw .malformed }
            trial.remoteStaticKey = remoteStatic
            trial.step = 3
            self = trial
            return payload
        default:
            throw .outOfTurn
        }
    }

    /// This side's sending and receiving keys, once the handshake has finished.
    public func transportKeys() -> (sending: SecretBytes, receiving: SecretBytes)? {
        guard isFinished else { return nil }
        let keys = state.split()
        return role == .initiator
            ? (keys.initiatorToResponder, keys.responderToInitiator)
            : (keys.responderToInitiator, keys.initiatorToResponder)
    }

    /// DH and MixKey: the shared secret lives only in scratch memory, zeroed right after.
    private mutating func mixDH(_ privateKey: SecretBytes, _ publicKey: [UInt8]) throws(Failure) {
        let mixed = Sodium.withScratch(Sodium.x25519KeyBytes) { shared in
            guard Sodium.x25519(privateKey, publicKey, into: shared) else { return false }
            state.mixKey(UnsafeRawBufferPointer(shared))
            return true
        }
        guard mixed else { throw .invalidKey }
    }
}
