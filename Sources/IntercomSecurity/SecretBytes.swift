import CSodium

/// Secret bytes (a private key, a session's keys, a chaining key) kept where libsodium keeps
/// secrets: memory from `sodium_malloc`, between guard pages, locked out of swap and core dumps
/// (`mlock`, `MADV_DONTDUMP`), read-only once written (a stray write faults), and zeroed by
/// `sodium_free` when the last reference goes. Swift arrays could not promise that: the runtime
/// copies them (copy on write, growth) and frees them without clearing.
///
/// The bytes never leave this storage as a Swift value: they are written once, by the closure
/// the initialiser is given, and read through `withUnsafeBytes`, whose pointer goes straight to
/// libsodium. Immutable, so any number of threads may read them at once, and copies of a value
/// that holds it (a handshake tried on a copy, a session in a table) share one buffer instead
/// of copying the secret. A class, so that the buffer has one owner, counted, and is freed at a
/// known point: when the last value that refers to it is gone.
public final class SecretBytes: @unchecked Sendable {
    // @unchecked: the pointer is written only in `init`, before the memory is made read-only,
    // and freed only in `deinit`; in between, it is only read.
    private let base: UnsafeMutableRawPointer
    public let count: Int

    /// `count` bytes written by `write`, which is given the guarded memory (zero-filled first).
    public init(count: Int, _ write: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count > 0)
        Sodium.ensureInitialised()
        guard let memory = sodium_malloc(count) else { fatalError("sodium_malloc(\(count)) failed: out of memory") }
        base = memory
        self.count = count
        sodium_memzero(memory, count)
        do {
            try write(UnsafeMutableRawBufferPointer(start: memory, count: count))
        } catch {
            sodium_free(memory)
            throw error
        }
        sodium_mprotect_readonly(memory)
    }

    /// A copy of `bytes`. The array stays as it was: a caller that owns it clears it
    /// (`Sodium.wipe`) once it is no longer needed.
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count) { out in _ = out.initializeMemory(as: UInt8.self, from: bytes) }
    }

    /// Takes `bytes` over: copies them into guarded memory and zeroes the array in place.
    public convenience init(taking bytes: inout [UInt8]) {
        self.init(copying: bytes)
        Sodium.wipe(&bytes)
    }

    /// `count` random bytes, drawn straight into guarded memory.
    public static func random(count: Int) -> SecretBytes {
        SecretBytes(count: count) { randombytes_buf($0.nonNullCBytes, count) }
    }

    deinit {
        // Zeroes, unlocks and unmaps the pages (sodium_free makes them writable first).
        sodium_free(base)
    }

    /// The secret, for as long as `body` runs: pass the pointer to libsodium, never copy it out.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// `count` bytes of the secret from `offset` (one key of several kept together).
    public func withUnsafeBytes<Result, Failure: Error>(
        offset: Int, count: Int, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition(offset >= 0 && count >= 0 && offset + count <= self.count)
        return try body(UnsafeRawBufferPointer(start: base + offset, count: count))
    }
}

extension SecretBytes: Equatable {
    /// Compared in constant time (`sodium_memcmp`).
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        lhs.count == rhs.count && sodium_memcmp(lhs.base, rhs.base, lhs.count) == 0
    }
}

extension SecretBytes: CustomStringConvertible {
    /// Never the bytes: a secret printed by mistake (a log line, a test failure) stays secret.
    public var description: String { "SecretBytes(\(count) bytes)" }
}

extension Sodium {
    /// Zeroes `bytes` in place (`sodium_memzero`, which the compiler may not leave out), keeping
    /// its count: for a secret that had to pass through a Swift array. Its storage is written
    /// where it is, so only this array's buffer is cleared: a copy made of it before (copy on
    /// write, growth) is not, which is why secrets are kept in `SecretBytes` instead.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
        }
    }

    /// A scratch buffer of `count` bytes on the stack for an intermediate secret (a
    /// Diffie–Hellman result, an HKDF temporary key), zeroed when `body` returns.
    static func withScratch<Result>(_ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(byteCount: count, alignment: 16) { buffer in
            sodium_memzero(buffer.baseAddress, count)
            defer { sodium_memzero(buffer.baseAddress, count) }
            return try body(buffer)
        }
    }
}
