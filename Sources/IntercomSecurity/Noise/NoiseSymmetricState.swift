/// Noise's CipherState and SymmetricState (the Noise Protocol Framework, revision 34, §5.1–5.2)
/// for the cipher ChaChaPoly and the hash SHA256, over libsodium.
struct NoiseCipherState: Sendable {
    private(set) var key: [UInt8]?
    private var nonce: UInt64 = 0

    mutating func initializeKey(_ key: [UInt8]?) {
        self.key = key
        nonce = 0
    }

    mutating func encrypt(associatedData: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        guard let key else { return plaintext }
        defer { nonce += 1 }
        return Sodium.seal(key: key, counter: nonce, associatedData: associatedData, plaintext: plaintext)
    }

    mutating func decrypt(associatedData: [UInt8], ciphertext: [UInt8]) -> [UInt8]? {
        guard let key else { return ciphertext }
        guard let plaintext = Sodium.open(key: key, counter: nonce, associatedData: associatedData, ciphertext: ciphertext) else {
            return nil
        }
        nonce += 1
        return plaintext
    }
}

struct NoiseSymmetricState: Sendable {
    static let hashLength = 32
    private(set) var chainingKey: [UInt8]
    private(set) var handshakeHash: [UInt8]
    private var cipher = NoiseCipherState()

    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        handshakeHash = name.count <= Self.hashLength
            ? name + [UInt8](repeating: 0, count: Self.hashLength - name.count)
            : Sodium.sha256(name)
        chainingKey = handshakeHash
    }

    mutating func mixKey(_ inputKeyMaterial: [UInt8]) {
        let outputs = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial)
        chainingKey = outputs.0
        cipher.initializeKey(outputs.1)
    }

    mutating func mixHash(_ data: [UInt8]) {
        handshakeHash = Sodium.sha256(handshakeHash, data)
    }

    mutating func encryptAndHash(_ plaintext: [UInt8]) -> [UInt8] {
        let ciphertext = cipher.encrypt(associatedData: handshakeHash, plaintext: plaintext)
        mixHash(ciphertext)
        return ciphertext
    }

    mutating func decryptAndHash(_ ciphertext: [UInt8]) -> [UInt8]? {
        guard let plaintext = cipher.decrypt(associatedData: handshakeHash, ciphertext: ciphertext) else { return nil }
        mixHash(ciphertext)
        return plaintext
    }

    /// The two transport keys: the initiator's sending key first.
    func split() -> (initiatorToResponder: [UInt8], responderToInitiator: [UInt8]) {
        Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: [])
    }

    /// Noise's HKDF with two outputs (RFC 5869 with an empty info, as §4.3 defines it).
    static func hkdf(chainingKey: [UInt8], inputKeyMaterial: [UInt8]) -> ([UInt8], [UInt8]) {
        let tempKey = Sodium.hmacSHA256(key: chainingKey, inputKeyMaterial)
        let output1 = Sodium.hmacSHA256(key: tempKey, [0x01])
        let output2 = Sodium.hmacSHA256(key: tempKey, output1, [0x02])
        return (output1, output2)
    }
}
