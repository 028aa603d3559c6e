import Glibc

/// Files that hold keys or the trusted list: created 0600, never through a symbolic link,
/// replaced atomically (a temporary file renamed into place), read with a size bound.
public enum PrivateFile {
    /// Writes an output the user asked for (statistics): created 0600, truncated if it is a
    /// file, refused if it is a symbolic link.
    public static func writeOutput(_ path: String, _ bytes: [UInt8]) throws(PrivateFileError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == ELOOP ? "it is a symbolic link, which intercom does not follow" : String(cString: strerror(errno))
            throw .failed(path: path, reason: reason)
        }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw .failed(path: path, reason: String(cString: strerror(errno))) }
            written += count
        }
    }

    /// Writes `bytes` to a new temporary file beside `path`, then links it to `path` only if
    /// nothing is there yet. Returns false when another process got there first.
    static func createExclusively(_ path: String, _ bytes: [UInt8]) throws(PrivateFileError) -> Bool {
        let temporary = try writeTemporary(beside: path, bytes)
        defer { unlink(temporary) }
        if link(temporary, path) == 0 { return true }
        if errno == EEXIST { return false }
        throw .failed(path: path, reason: String(cString: strerror(errno)))
    }

    /// Replaces `path` with `bytes` in one step.
    static func replace(_ path: String, _ bytes: [UInt8]) throws(PrivateFileError) {
        let temporary = try writeTemporary(beside: path, bytes)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .failed(path: path, reason: reason)
        }
    }

    /// The file's bytes, nil when it does not exist. Refuses links and files larger than `limit`.
    static func read(_ path: String, limit: Int = 1 << 20) throws(PrivateFileError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .failed(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(descriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .failed(path: path, reason: String(cString: strerror(errno))) }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            guard bytes.count <= limit else { throw .failed(path: path, reason: "larger than \(limit) bytes") }
        }
    }

    /// Holds an exclusive lock on `path` (created 0600) while `body` runs: one writer at a time.
    static func withLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PrivateFileError.failed(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw PrivateFileError.failed(path: path, reason: String(cString: strerror(errno))) }
        }
        return try body()
    }

    private static func writeTemporary(beside path: String, _ bytes: [UInt8]) throws(PrivateFileError) -> String {
        var template = Array((path + ".XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw .failed(path: path, reason: String(cString: strerror(errno))) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { close(descriptor) }
        // mkstemp creates 0600 already; say so anyway, whatever the umask.
        fchmod(descriptor, 0o600)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                throw .failed(path: path, reason: reason)
            }
            written += count
        }
        guard fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .failed(path: path, reason: reason)
        }
        return temporary
    }
}

public enum PrivateFileError: Error, Equatable, CustomStringConvertible {
    case failed(path: String, reason: String)
    case malformed(path: String, reason: String)

    public var description: String {
        switch self {
        case .failed(let path, let reason): "\(path): \(reason)"
        case .malformed(let path, let reason): "\(path) is not valid: \(reason)"
        }
    }
}
