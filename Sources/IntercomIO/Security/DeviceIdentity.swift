import IntercomCore
import IntercomSecurity

/// This device's long-term X25519 key pair, made on first use and kept 0600 in the state
/// directory (`identity`). Processes that share a state directory are one device: they trust
/// each other without pairing.
///
/// The private key is held for the process's lifetime in guarded memory (`SecretBytes`); on its
/// way from or to the file it passes through the file's bytes only, which are zeroed in place
/// once read or written.
public struct DeviceIdentity: Sendable {
    public let privateKey: SecretBytes
    public let publicKey: [UInt8]

    public static let fileName = "identity"
    private static let header = "intercom-identity 1"

    public init(privateKey: SecretBytes) {
        self.privateKey = privateKey
        publicKey = Sodium.x25519PublicKey(privateKey)
    }

    /// The identity in `directory`, created there when it has none. Several processes starting
    /// at once agree on one: the first to link its file into place wins, the others read it.
    ///
    /// A process killed while it made the identity may have left its temporary file behind
    /// (`identity.` and a random suffix: a private key never used, or a second link to the
    /// identity). Such files are never read, and are removed at the next start, under the
    /// directory's lock (`flock` on it), which every maker of an identity holds: so none is
    /// another process's in the making.
    public static func loadOrCreate(in directory: StateDirectory) throws -> DeviceIdentity {
        let handle = try directory.prepare()
        let path = handle.file(fileName)
        if var existing = try PrivateFile.read(fileName, in: handle, limit: 4096) {
            // The file's bytes hold the key (in hexadecimal): zeroed in place once parsed.
            defer { Sodium.wipe(&existing) }
            if PrivateFile.hasLeftovers(of: fileName, in: handle) {
                try PrivateFile.withDirectoryLock(handle) { PrivateFile.removeLeftovers(of: fileName, in: handle) }
            }
            return try parse(existing, path: path)
        }
        return try PrivateFile.withDirectoryLock(handle) {
            PrivateFile.removeLeftovers(of: fileName, in: handle)
            let fresh = DeviceIdentity(privateKey: Sodium.x25519KeyPair().privateKey)
            var text = fileText(fresh.privateKey)
            // The text holds the key: zeroed in place once written (the file is the key's home).
            defer { Sodium.wipe(&text) }
            if try PrivateFile.createExclusively(fileName, in: handle, text) { return fresh }
            // Made by another process while we waited for the lock.
            guard var winner = try PrivateFile.read(fileName, in: handle, limit: 4096) else {
                throw PrivateFileError.failed(path: path, reason: "vanished while being created")
            }
            defer { Sodium.wipe(&winner) }
            return try parse(winner, path: path)
        }
    }

    /// The identity file's contents for `privateKey`: the header line, then `x25519` and the key
    /// in hexadecimal. Made as bytes, sized up front (never grown, so never copied), for the
    /// caller to zero once written.
    static func fileText(_ privateKey: SecretBytes) -> [UInt8] {
        let prefix = Array("\(header)\nx25519 ".utf8)
        var text = [UInt8](repeating: 0, count: prefix.count + 2 * privateKey.count + 1)
        text.withUnsafeMutableBufferPointer { out in
            _ = out.initialize(from: prefix)
            privateKey.withUnsafeBytes { key in
                Hexadecimal.encode(key, into: UnsafeMutableBufferPointer(rebasing: out[prefix.count..<(out.count - 1)]))
            }
            out[out.count - 1] = UInt8(ascii: "\n")
        }
        return text
    }

    /// Reads the key from the file's bytes where they are, straight into guarded memory: no
    /// string or array of the key is made on the way.
    static func parse(_ bytes: [UInt8], path: String) throws(PrivateFileError) -> DeviceIdentity {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        guard let first = lines.first, first.elementsEqual(header.utf8), lines.count >= 2 else {
            throw .malformed(path: path, reason: "not an intercom identity")
        }
        let fields = lines[1].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard fields.count == 2, fields[0].elementsEqual("x25519".utf8), fields[1].count == 2 * Sodium.x25519KeyBytes,
              fields[1].allSatisfy({ Hexadecimal.isDigit($0) })
        else {
            throw .malformed(path: path, reason: "no X25519 key")
        }
        let digits = fields[1]
        let key = SecretBytes(count: Sodium.x25519KeyBytes) { out in
            bytes.withUnsafeBufferPointer { all in
                _ = Hexadecimal.decode(UnsafeBufferPointer(rebasing: all[digits.startIndex..<digits.endIndex]), into: out)
            }
        }
        return DeviceIdentity(privateKey: key)
    }
}
