/// Noise's CipherState and SymmetricState (the Noise Protocol Framework, revision 34, §5.1–5.2)
/// for the cipher ChaChaPoly and the hash SHA256, over libsodium. The chaining key and the
/// cipher key are secrets: each is kept in `SecretBytes` and replaced (never changed in place)
/// at each MixKey, so a copy of the state (a message tried on a copy) shares them and the one
/// left behind frees its own.
struct NoiseCipherState: Sendable {
    private(set) var key: SecretBytes?
    private var nonce: UInt64 = 0

    mutating func initializeKey(_ key: SecretBytes?) {
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
    private(set) var chainingKey: SecretBytes
    private(set) var handshakeHash: [UInt8]
    private var cipher = NoiseCipherState()

    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        handshakeHash = name.count <= Self.hashLength
            ? name + [UInt8](repeating: 0, count: Self.hashLength - name.count)
            : Sodium.sha256(name)
        // Public so far (the protocol name): it becomes secret at the first MixKey.
        chainingKey = SecretBytes(copying: handshakeHash)
    }

    /// MixKey with input key material passed by pointer (a Diffie–Hellman result in scratch memory).
    mutating func mixKey(_ inputKeyMaterial: UnsafeRawBufferPointer) {
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
    func split() -> (initiatorToResponder: SecretBytes, responderToInitiator: SecretBytes) {
        Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// Noise's HKDF with two outputs (RFC 5869 with an empty info, as §4.3 defines it), each
    /// written straight into guarded memory; the temporary key lives in scratch memory, zeroed
    /// on return.
    static func hkdf(chainingKey: SecretBytes, inputKeyMaterial: UnsafeRawBufferPointer) -> (SecretBytes, SecretBytes) {
        Sodium.withScratch(hashLength) { tempKey in
            let tempKey = UnsafeRawBufferPointer(tempKey)
            chainingKey.withUnsafeBytes { Sodium.hmacSHA256(key: $0, inputKeyMaterial, into: UnsafeMutableRawBufferPointer(mutating: tempKey)) }
            let output1 = SecretBytes(count: hashLength) { out in
                withUnsafeBytes(of: UInt8(0x01)) { Sodium.hmacSHA256(key: tempKey, $0, into: out) }
            }
            let output2 = SecretBytes(count: hashLength) { out in
                output1.withUnsafeBytes { first in
                    withUnsafeBytes(of: UInt8(0x02)) { Sodium.hmacSHA256(key: tempKey, first, $0, into: out) }
                }
            }
            return (output1, output2)
        }
    }
}
