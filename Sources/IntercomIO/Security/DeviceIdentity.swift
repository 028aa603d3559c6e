import IntercomCore
import IntercomSecurity

/// This device's long-term X25519 key pair, made on first use and kept 0600 in the state
/// directory (`identity`). Processes that share a state directory are one device: they trust
/// each other without pairing.
public struct DeviceIdentity: Sendable {
    public let privateKey: [UInt8]
    public let publicKey: [UInt8]

    public static let fileName = "identity"
    private static let header = "intercom-identity 1"

    public init(privateKey: [UInt8]) {
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
        if let existing = try PrivateFile.read(fileName, in: handle, limit: 4096) {
            if PrivateFile.hasLeftovers(of: fileName, in: handle) {
                try PrivateFile.withDirectoryLock(handle) { PrivateFile.removeLeftovers(of: fileName, in: handle) }
            }
            return try parse(existing, path: path)
        }
        return try PrivateFile.withDirectoryLock(handle) {
            PrivateFile.removeLeftovers(of: fileName, in: handle)
            let fresh = DeviceIdentity(privateKey: Sodium.x25519KeyPair().privateKey)
            let text = "\(header)\nx25519 \(Hexadecimal.encode(fresh.privateKey))\n"
            if try PrivateFile.createExclusively(fileName, in: handle, Array(text.utf8)) { return fresh }
            // Made by another process while we waited for the lock.
            guard let winner = try PrivateFile.read(fileName, in: handle, limit: 4096) else {
                throw PrivateFileError.failed(path: path, reason: "vanished while being created")
            }
            return try parse(winner, path: path)
        }
    }

    private static func parse(_ bytes: [UInt8], path: String) throws(PrivateFileError) -> DeviceIdentity {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.first == Substring(header), lines.count >= 2 else {
            throw .malformed(path: path, reason: "not an intercom identity")
        }
        let fields = lines[1].split(separator: " ")
        guard fields.count == 2, fields[0] == "x25519", let key = Hexadecimal.decode(fields[1]), key.count == Sodium.x25519KeyBytes else {
            throw .malformed(path: path, reason: "no X25519 key")
        }
        return DeviceIdentity(privateKey: key)
    }
}
