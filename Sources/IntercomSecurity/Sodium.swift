import CSodium

/// Thin, typed calls into libsodium: every primitive intercom's cryptography uses, and
/// nothing of our own making. Keys and outputs are byte arrays of the sizes libsodium states.
public enum Sodium {
    /// libsodium must be initialised once before use; `sodium_init` is idempotent and thread-safe.
    static let initialised: Bool = sodium_init() >= 0

    static func ensureInitialised() {
        precondition(initialised, "libsodium could not initialise")
    }

    public static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialised()
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }

    /// A uniformly random integer below `upperBound` (no modulo bias).
    public static func randomUniform(below upperBound: UInt32) -> UInt32 {
        ensureInitialised()
        return randombytes_uniform(upperBound)
    }

    /// Compares in time that does not depend on where the arrays differ.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && sodium_memcmp(a, b, a.count) == 0
    }

    // MARK: Hashes

    public static func sha256(_ parts: [UInt8]...) -> [UInt8] {
        var state = crypto_hash_sha256_state()
        crypto_hash_sha256_init(&state)
        for part in parts { crypto_hash_sha256_update(&state, part, UInt64(part.count)) }
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        crypto_hash_sha256_final(&state, &out)
        return out
    }

    public static func sha512(_ parts: [UInt8]...) -> [UInt8] {
        var state = crypto_hash_sha512_state()
        crypto_hash_sha512_init(&state)
        for part in parts { crypto_hash_sha512_update(&state, part, UInt64(part.count)) }
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha512_BYTES))
        crypto_hash_sha512_final(&state, &out)
        return out
    }

    /// HMAC-SHA-256 (RFC 2104) with a key of any length.
    public static func hmacSHA256(key: [UInt8], _ parts: [UInt8]...) -> [UInt8] {
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, key, key.count)
        for part in parts { crypto_auth_hmacsha256_update(&state, part, UInt64(part.count)) }
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256_final(&state, &out)
        return out
    }

    /// HMAC-SHA-512 (RFC 2104) with a key of any length.
    public static func hmacSHA512(key: [UInt8], _ parts: [UInt8]...) -> [UInt8] {
        var state = crypto_auth_hmacsha512_state()
        crypto_auth_hmacsha512_init(&state, key, key.count)
        for part in parts { crypto_auth_hmacsha512_update(&state, part, UInt64(part.count)) }
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha512_BYTES))
        crypto_auth_hmacsha512_final(&state, &out)
        return out
    }

    /// libsodium's BLAKE2b key derivation: independent subkeys of one key, told apart by an
    /// id and an 8-byte context.
    public static func deriveSubkey(of key: [UInt8], id: UInt64, context: StaticString, count: Int = 32) -> [UInt8] {
        precondition(key.count == Int(crypto_kdf_KEYBYTES) && context.utf8CodeUnitCount == Int(crypto_kdf_CONTEXTBYTES))
        var out = [UInt8](repeating: 0, count: count)
        context.withUTF8Buffer { ctx in
            ctx.withMemoryRebound(to: CChar.self) { ctx in
                _ = crypto_kdf_derive_from_key(&out, count, id, ctx.baseAddress!, key)
            }
        }
        return out
    }

    // MARK: X25519

    public static let x25519KeyBytes = Int(crypto_scalarmult_curve25519_BYTES)

    /// A fresh X25519 key pair.
    public static func x25519KeyPair() -> (privateKey: [UInt8], publicKey: [UInt8]) {
        let privateKey = randomBytes(Int(crypto_scalarmult_curve25519_SCALARBYTES))
        return (privateKey, x25519PublicKey(privateKey))
    }

    public static func x25519PublicKey(_ privateKey: [UInt8]) -> [UInt8] {
        ensureInitialised()
        var publicKey = [UInt8](repeating: 0, count: x25519KeyBytes)
        crypto_scalarmult_curve25519_base(&publicKey, privateKey)
        return publicKey
    }

    /// The Diffie–Hellman result; nil for a low-order public key (an all-zero shared secret).
    public static func x25519(_ privateKey: [UInt8], _ publicKey: [UInt8]) -> [UInt8]? {
        guard publicKey.count == x25519KeyBytes, privateKey.count == x25519KeyBytes else { return nil }
        var shared = [UInt8](repeating: 0, count: x25519KeyBytes)
        return crypto_scalarmult_curve25519(&shared, privateKey, publicKey) == 0 ? shared : nil
    }

    // MARK: ChaCha20-Poly1305 (IETF, RFC 8439)

    public static let aeadKeyBytes = Int(crypto_aead_chacha20poly1305_ietf_KEYBYTES)
    public static let aeadTagBytes = Int(crypto_aead_chacha20poly1305_ietf_ABYTES)
    public static let aeadNonceBytes = Int(crypto_aead_chacha20poly1305_ietf_NPUBBYTES)

    /// Noise's nonce for ChaChaPoly: 32 bits of zeros, then the 64-bit counter, little-endian;
    /// made on the stack, since it is needed for every packet.
    private static func withNonce<Result>(_ counter: UInt64, _ body: (UnsafePointer<UInt8>) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: aeadNonceBytes) { nonce in
            nonce.initialize(repeating: 0)
            withUnsafeBytes(of: counter.littleEndian) { for (index, byte) in $0.enumerated() { nonce[4 + index] = byte } }
            return body(UnsafePointer(nonce.baseAddress!))
        }
    }

    public static func seal(key: [UInt8], counter: UInt64, associatedData: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        var out = associatedData
        seal(key: key, counter: counter, plaintext: plaintext, appendingTo: &out)
        return Array(out[associatedData.count...])
    }

    /// Seals `plaintext` with everything `datagram` holds so far as its associated data, and
    /// appends the ciphertext and tag to it: with room in `datagram`, nothing is allocated.
    public static func seal(key: [UInt8], counter: UInt64, plaintext: [UInt8], appendingTo datagram: inout [UInt8]) {
        precondition(key.count == aeadKeyBytes)
        let associatedCount = datagram.count
        datagram.append(contentsOf: repeatElement(0, count: plaintext.count + aeadTagBytes))
        datagram.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var written: UInt64 = 0
            _ = withNonce(counter) { nonce in
                crypto_aead_chacha20poly1305_ietf_encrypt(
                    base + associatedCount, &written, plaintext, UInt64(plaintext.count), base, UInt64(associatedCount),
                    nil, nonce, key)
            }
        }
    }

    /// The plaintext, or nil when the tag does not verify.
    public static func open(key: [UInt8], counter: UInt64, associatedData: [UInt8], ciphertext: [UInt8]) -> [UInt8]? {
        let datagram = associatedData + ciphertext
        return open(key: key, counter: counter, datagram: datagram[...], associatedCount: associatedData.count)
    }

    /// Opens a datagram whose first `associatedCount` bytes are its associated data and the
    /// rest ciphertext and tag: the plaintext, or nil when the tag does not verify.
    public static func open(key: [UInt8], counter: UInt64, datagram: ArraySlice<UInt8>, associatedCount: Int) -> [UInt8]? {
        var out: [UInt8] = []
        return open(key: key, counter: counter, datagram: datagram, associatedCount: associatedCount, into: &out) ? out : nil
    }

    /// `open` into `plaintext`, replacing what it held (with room in it, nothing is allocated);
    /// false, with `plaintext` emptied, when the tag does not verify.
    public static func open(
        key: [UInt8], counter: UInt64, datagram: ArraySlice<UInt8>, associatedCount: Int, into plaintext: inout [UInt8]
    ) -> Bool {
        precondition(key.count == aeadKeyBytes)
        plaintext.removeAll(keepingCapacity: true)
        guard associatedCount >= 0, datagram.count - associatedCount >= aeadTagBytes else { return false }
        plaintext.append(contentsOf: repeatElement(0, count: datagram.count - associatedCount - aeadTagBytes))
        let status = datagram.withUnsafeBufferPointer { bytes in
            let base = bytes.baseAddress!
            var written: UInt64 = 0
            return plaintext.withUnsafeMutableBufferPointer { out in
                withNonce(counter) { nonce in
                    crypto_aead_chacha20poly1305_ietf_decrypt(
                        out.baseAddress, &written, nil, base + associatedCount, UInt64(bytes.count - associatedCount), base,
                        UInt64(associatedCount), nonce, key)
                }
            }
        }
        guard status == 0 else {
            plaintext.removeAll(keepingCapacity: true)
            return false
        }
        return true
    }

    // MARK: ristretto255 (for CPace)

    public static let ristrettoBytes = Int(crypto_core_ristretto255_BYTES)
    public static let ristrettoScalarBytes = Int(crypto_core_ristretto255_SCALARBYTES)
    public static let ristrettoHashBytes = Int(crypto_core_ristretto255_HASHBYTES)

    /// The element for a 64-byte uniform string (Elligator 2 twice, as RFC 9496 specifies).
    public static func ristrettoFromHash(_ hash: [UInt8]) -> [UInt8] {
        precondition(hash.count == ristrettoHashBytes)
        ensureInitialised()
        var point = [UInt8](repeating: 0, count: ristrettoBytes)
        crypto_core_ristretto255_from_hash(&point, hash)
        return point
    }

    public static func ristrettoRandomScalar() -> [UInt8] {
        ensureInitialised()
        var scalar = [UInt8](repeating: 0, count: ristrettoScalarBytes)
        crypto_core_ristretto255_scalar_random(&scalar)
        return scalar
    }

    /// scalar · point; nil for an invalid encoding or the identity result.
    public static func ristrettoMultiply(_ scalar: [UInt8], _ point: [UInt8]) -> [UInt8]? {
        guard scalar.count == ristrettoScalarBytes, point.count == ristrettoBytes else { return nil }
        var out = [UInt8](repeating: 0, count: ristrettoBytes)
        return crypto_scalarmult_ristretto255(&out, scalar, point) == 0 ? out : nil
    }

    public static func isValidRistrettoPoint(_ point: [UInt8]) -> Bool {
        point.count == ristrettoBytes && crypto_core_ristretto255_is_valid_point(point) == 1
    }
}
