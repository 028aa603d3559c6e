import CSodium
import IntercomCore

/// Thin, typed calls into libsodium: every primitive intercom's cryptography uses, and
/// nothing of our own making. Public values are byte arrays of the sizes libsodium states;
/// secrets that live longer than a call come and go as `SecretBytes`, or as pointers into it
/// and into scratch memory that is zeroed after use, never as arrays.
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

    /// SHA-512 of public `parts`, then a secret passed by pointer, then `tail`, written to `out`
    /// (64 bytes): for a key hashed from a secret, with no copy of the secret made and the
    /// state, which has absorbed it, zeroed.
    static func sha512(
        _ parts: [ArraySlice<UInt8>], secret: UnsafeRawBufferPointer, then tail: [UInt8], into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(out.count >= Int(crypto_hash_sha512_BYTES))
        var state = crypto_hash_sha512_state()
        crypto_hash_sha512_init(&state)
        for part in parts { part.withUnsafeBufferPointer { _ = crypto_hash_sha512_update(&state, $0.baseAddress, UInt64($0.count)) } }
        crypto_hash_sha512_update(&state, secret.cBytes, UInt64(secret.count))
        crypto_hash_sha512_update(&state, tail, UInt64(tail.count))
        crypto_hash_sha512_final(&state, out.nonNullCBytes)
        sodium_memzero(&state, MemoryLayout.size(ofValue: state))
    }

    /// HMAC-SHA-256 (RFC 2104) with a key of any length.
    public static func hmacSHA256(key: [UInt8], _ parts: [UInt8]...) -> [UInt8] {
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, key, key.count)
        for part in parts { crypto_auth_hmacsha256_update(&state, part, UInt64(part.count)) }
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256_final(&state, &out)
        // The state holds hashes of the key (its inner and outer pads).
        sodium_memzero(&state, MemoryLayout.size(ofValue: state))
        return out
    }

    public static let hmacSHA256Bytes = Int(crypto_auth_hmacsha256_BYTES)

    /// HMAC-SHA-256 under a key passed by pointer (a secret in `SecretBytes` or scratch memory),
    /// written to `out` (32 bytes): no copy of the key or of the result is made, and the state,
    /// which holds hashes of the key, is zeroed before returning.
    static func hmacSHA256(key: UnsafeRawBufferPointer, _ parts: UnsafeRawBufferPointer..., into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= hmacSHA256Bytes)
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, key.nonNullCBytes, key.count)
        for part in parts where !part.isEmpty {
            crypto_auth_hmacsha256_update(&state, part.cBytes, UInt64(part.count))
        }
        crypto_auth_hmacsha256_final(&state, out.nonNullCBytes)
        sodium_memzero(&state, MemoryLayout.size(ofValue: state))
    }

    /// HMAC-SHA-512 under a secret key, without copying it out of its storage.
    public static func hmacSHA512(key: SecretBytes, _ parts: [UInt8]...) -> [UInt8] {
        var state = crypto_auth_hmacsha512_state()
        key.withUnsafeBytes { _ = crypto_auth_hmacsha512_init(&state, $0.nonNullCBytes, $0.count) }
        for part in parts { crypto_auth_hmacsha512_update(&state, part, UInt64(part.count)) }
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha512_BYTES))
        crypto_auth_hmacsha512_final(&state, &out)
        sodium_memzero(&state, MemoryLayout.size(ofValue: state))
        return out
    }

    /// libsodium's BLAKE2b key derivation: independent subkeys of one key (passed by pointer),
    /// told apart by an id and an 8-byte context, written into `out` (as many bytes as it holds).
    static func deriveSubkey(of key: UnsafeRawBufferPointer, id: UInt64, context: StaticString, into out: UnsafeMutableRawBufferPointer) {
        precondition(key.count == Int(crypto_kdf_KEYBYTES) && context.utf8CodeUnitCount == Int(crypto_kdf_CONTEXTBYTES))
        context.withUTF8Buffer { ctx in
            ctx.withMemoryRebound(to: CChar.self) { ctx in
                _ = crypto_kdf_derive_from_key(
                    out.nonNullCBytes, out.count, id, ctx.nonNullAddress,
                    key.nonNullCBytes)
            }
        }
    }

    // MARK: X25519

    public static let x25519KeyBytes = Int(crypto_scalarmult_curve25519_BYTES)

    /// A fresh X25519 key pair, its private key drawn straight into guarded memory.
    public static func x25519KeyPair() -> (privateKey: SecretBytes, publicKey: [UInt8]) {
        let privateKey = SecretBytes.random(count: Int(crypto_scalarmult_curve25519_SCALARBYTES))
        return (privateKey, x25519PublicKey(privateKey))
    }

    public static func x25519PublicKey(_ privateKey: SecretBytes) -> [UInt8] {
        ensureInitialised()
        precondition(privateKey.count == x25519KeyBytes)
        var publicKey = [UInt8](repeating: 0, count: x25519KeyBytes)
        privateKey.withUnsafeBytes { _ = crypto_scalarmult_curve25519_base(&publicKey, $0.nonNullCBytes) }
        return publicKey
    }

    /// The Diffie–Hellman result written to `shared` (32 bytes, scratch memory the caller zeroes);
    /// false for a low-order public key (an all-zero shared secret) or a key of the wrong size.
    static func x25519(_ privateKey: SecretBytes, _ publicKey: [UInt8], into shared: UnsafeMutableRawBufferPointer) -> Bool {
        guard publicKey.count == x25519KeyBytes, privateKey.count == x25519KeyBytes, shared.count >= x25519KeyBytes else { return false }
        return privateKey.withUnsafeBytes {
            crypto_scalarmult_curve25519(
                shared.nonNullCBytes, $0.nonNullCBytes, publicKey) == 0
        }
    }

    public static func x25519PublicKey(_ privateKey: [UInt8]) -> [UInt8] {
        ensureInitialised()
        var publicKey = [UInt8](repeating: 0, count: x25519KeyBytes)
        crypto_scalarmult_curve25519_base(&publicKey, privateKey)
        return publicKey
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
            return body(UnsafePointer(nonce.nonNullAddress))
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
        key.withUnsafeBytes { seal(key: $0, counter: counter, plaintext: plaintext, appendingTo: &datagram) }
    }

    /// `seal` under a key passed by pointer (a `SecretBytes`' storage): nothing is copied or allocated.
    public static func seal(key: UnsafeRawBufferPointer, counter: UInt64, plaintext: [UInt8], appendingTo datagram: inout [UInt8]) {
        precondition(key.count == aeadKeyBytes)
        let key = key.nonNullCBytes
        let associatedCount = datagram.count
        datagram.append(contentsOf: repeatElement(0, count: plaintext.count + aeadTagBytes))
        datagram.withUnsafeMutableBufferPointer { buffer in
            // Never empty: it holds at least the tag.
            let base = buffer.nonNullAddress
            var written: UInt64 = 0
            _ = withNonce(counter) { nonce in
                crypto_aead_chacha20poly1305_ietf_encrypt(
                    base + associatedCount, &written, plaintext, UInt64(plaintext.count), base, UInt64(associatedCount),
                    nil, nonce, key)
            }
        }
    }

    /// `seal` under a secret key, read where it is kept.
    public static func seal(key: SecretBytes, counter: UInt64, associatedData: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        var out = associatedData
        key.withUnsafeBytes { seal(key: $0, counter: counter, plaintext: plaintext, appendingTo: &out) }
        return Array(out[associatedData.count...])
    }

    /// `open` under a secret key, read where it is kept: the plaintext, or nil when the tag does not verify.
    public static func open(key: SecretBytes, counter: UInt64, associatedData: [UInt8], ciphertext: [UInt8]) -> [UInt8]? {
        let datagram = associatedData + ciphertext
        var out: [UInt8] = []
        let opened = key.withUnsafeBytes {
            open(key: $0, counter: counter, datagram: datagram[...], associatedCount: associatedData.count, into: &out)
        }
        return opened ? out : nil
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
        key.withUnsafeBytes { open(key: $0, counter: counter, datagram: datagram, associatedCount: associatedCount, into: &plaintext) }
    }

    /// `open` under a key passed by pointer (a `SecretBytes`' storage): nothing is copied, and
    /// with room in `plaintext` nothing is allocated.
    public static func open(
        key: UnsafeRawBufferPointer, counter: UInt64, datagram: ArraySlice<UInt8>, associatedCount: Int, into plaintext: inout [UInt8]
    ) -> Bool {
        precondition(key.count == aeadKeyBytes)
        let key = key.nonNullCBytes
        plaintext.removeAll(keepingCapacity: true)
        guard associatedCount >= 0, datagram.count - associatedCount >= aeadTagBytes else { return false }
        plaintext.append(contentsOf: repeatElement(0, count: datagram.count - associatedCount - aeadTagBytes))
        let status = datagram.withUnsafeBufferPointer { bytes in
            // Never empty: it holds at least a tag (checked above).
            let base = bytes.nonNullAddress
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

    /// A random scalar, drawn straight into guarded memory.
    public static func ristrettoRandomScalar() -> SecretBytes {
        SecretBytes(count: ristrettoScalarBytes) { crypto_core_ristretto255_scalar_random($0.nonNullCBytes) }
    }

    /// secret scalar · point, written to `out` (scratch memory the caller zeroes); false for an
    /// invalid encoding or the identity result.
    static func ristrettoMultiply(_ scalar: SecretBytes, _ point: [UInt8], into out: UnsafeMutableRawBufferPointer) -> Bool {
        guard scalar.count == ristrettoScalarBytes, point.count == ristrettoBytes, out.count >= ristrettoBytes else { return false }
        return scalar.withUnsafeBytes {
            crypto_scalarmult_ristretto255(
                out.nonNullCBytes, $0.nonNullCBytes, point) == 0
        }
    }

    public static func isValidRistrettoPoint(_ point: [UInt8]) -> Bool {
        point.count == ristrettoBytes && crypto_core_ristretto255_is_valid_point(point) == 1
    }
}
