import Glibc

/// Files that hold keys or the trusted list: reached through their checked state directory's
/// descriptor, created 0600, never through a symbolic link, replaced atomically and durably (a
/// temporary file written and flushed, renamed or linked into place, the directory flushed),
/// read only when they are the user's own and closed to others, with a size bound.
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

    /// Writes `bytes` to a new temporary file beside `name`, then links it to `name` only if
    /// nothing is there yet. Returns false when another process got there first. Durable when
    /// it returns true: the file's data and the directory entry are both on disk.
    static func createExclusively(_ name: String, in directory: StateDirectory.Handle, _ bytes: [UInt8]) throws(PrivateFileError) -> Bool {
        let temporary = try writeTemporary(beside: name, in: directory, bytes)
        defer { unlinkat(directory.descriptor, temporary, 0) }
        guard linkat(directory.descriptor, temporary, directory.descriptor, name, 0) == 0 else {
            if errno == EEXIST { return false }
            throw .failed(path: directory.file(name), reason: String(cString: strerror(errno)))
        }
        try synchronize(directory, name)
        return true
    }

    /// Replaces `name` with `bytes` in one step (a reader, or a crash, sees the old file or the
    /// new one, never part of either), and durably: the new file is on disk when this returns.
    static func replace(_ name: String, in directory: StateDirectory.Handle, _ bytes: [UInt8]) throws(PrivateFileError) {
        let temporary = try writeTemporary(beside: name, in: directory, bytes)
        guard renameat(directory.descriptor, temporary, directory.descriptor, name) == 0 else {
            let reason = String(cString: strerror(errno))
            unlinkat(directory.descriptor, temporary, 0)
            throw .failed(path: directory.file(name), reason: reason)
        }
        try synchronize(directory, name)
    }

    /// The file's bytes, nil when it does not exist. Refuses links, files larger than `limit`,
    /// and files that are not safely ours: not a regular file, owned by another user, or open
    /// to others (group or world bits). Checked on the open descriptor, so what is checked is
    /// what is read.
    static func read(_ name: String, in directory: StateDirectory.Handle, limit: Int = 1 << 20) throws(PrivateFileError) -> [UInt8]? {
        let path = directory.file(name)
        // Non-blocking: a FIFO planted under the name must not hang us before the check refuses it.
        let descriptor = openat(directory.descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP: throw .unsafe(path: path, reason: "it is a symbolic link, which intercom does not follow")
            case let code: throw .failed(path: path, reason: String(cString: strerror(code)))
            }
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .failed(path: path, reason: String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .unsafe(path: path, reason: "it is not a regular file") }
        guard status.st_uid == geteuid() else {
            throw .unsafe(path: path, reason: "it belongs to user \(status.st_uid), not to this user (\(geteuid()))")
        }
        guard status.st_mode & 0o077 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw .unsafe(path: path, reason: "its mode is 0\(mode): others may read or change it (intercom keeps it 0600)")
        }
        // Sized for the whole file up front, so that it is not grown (a grown array leaves the
        // bytes it held in freed memory): the caller of a file that holds a key zeroes the
        // bytes it is given, and the chunk they came through is zeroed here.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(limit, Int(status.st_size)) + 1)
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { chunk.withUnsafeMutableBytes { explicit_bzero($0.nonNullCBytes, $0.count) } }
        while true {
            let count = Glibc.read(descriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .failed(path: path, reason: String(cString: strerror(errno))) }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            guard bytes.count <= limit else { throw .failed(path: path, reason: "larger than \(limit) bytes") }
        }
    }

    /// Removes the temporary files of `name` (its name, a dot and a suffix) that a writer killed
    /// mid-write left behind. Only under the lock that every writer of `name` holds: then no
    /// other writer is making one.
    static func removeLeftovers(of name: String, in directory: StateDirectory.Handle) {
        for leftover in leftovers(of: name, in: directory) { unlinkat(directory.descriptor, leftover, 0) }
    }

    /// Whether temporary files of `name` are there (looked at without a lock).
    static func hasLeftovers(of name: String, in directory: StateDirectory.Handle) -> Bool {
        !leftovers(of: name, in: directory).isEmpty
    }

    private static func leftovers(of name: String, in directory: StateDirectory.Handle) -> [String] {
        let copy = dup(directory.descriptor)
        guard copy >= 0 else { return [] }
        guard let stream = fdopendir(copy) else {
            close(copy)
            return []
        }
        defer { closedir(stream) }
        // A directory stream shares its position with the descriptor it was made from (and with
        // the handle's, of which it is a copy): start from the beginning.
        rewinddir(stream)
        let prefix = name + "."
        var found: [String] = []
        while let entry = readdir(stream) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if entryName.hasPrefix(prefix), entryName.count > prefix.count { found.append(entryName) }
        }
        return found
    }

    /// Holds an exclusive lock on the directory itself (`flock` on its descriptor) while `body`
    /// runs; every process opens the directory anew, so each holds a lock of its own.
    static func withDirectoryLock<T>(_ directory: StateDirectory.Handle, _ body: () throws -> T) throws -> T {
        while flock(directory.descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw PrivateFileError.failed(path: directory.path, reason: String(cString: strerror(errno))) }
        }
        defer { flock(directory.descriptor, LOCK_UN) }
        return try body()
    }

    /// Holds an exclusive lock on `name` (created 0600) while `body` runs: one writer at a time.
    static func withLock<T>(_ name: String, in directory: StateDirectory.Handle, _ body: () throws -> T) throws -> T {
        let descriptor = openat(directory.descriptor, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PrivateFileError.failed(path: directory.file(name), reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw PrivateFileError.failed(path: directory.file(name), reason: String(cString: strerror(errno))) }
        }
        return try body()
    }

    /// Flushes the directory, so that a link or rename just made survives a power cut: the
    /// file's own fsync does not cover its directory entry.
    private static func synchronize(_ directory: StateDirectory.Handle, _ name: String) throws(PrivateFileError) {
        guard fsync(directory.descriptor) == 0 else { throw .failed(path: directory.file(name), reason: String(cString: strerror(errno))) }
    }

    /// A new file named after `name` with a random suffix, holding `bytes`, on disk; its name.
    private static func writeTemporary(beside name: String, in directory: StateDirectory.Handle, _ bytes: [UInt8]) throws(PrivateFileError) -> String {
        let path = directory.file(name)
        var generator = SystemRandomNumberGenerator()
        var temporary = ""
        var descriptor: Int32 = -1
        while descriptor < 0 {
            temporary = name + "." + String(generator.next() as UInt64, radix: 36)
            descriptor = openat(directory.descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 || errno == EEXIST else { throw .failed(path: path, reason: String(cString: strerror(errno))) }
        }
        defer { close(descriptor) }
        // Created 0600 already, unless the umask took more; say so anyway.
        fchmod(descriptor, 0o600)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                unlinkat(directory.descriptor, temporary, 0)
                throw .failed(path: path, reason: reason)
            }
            written += count
        }
        guard fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            unlinkat(directory.descriptor, temporary, 0)
            throw .failed(path: path, reason: reason)
        }
        return temporary
    }
}

public enum PrivateFileError: Error, Equatable, CustomStringConvertible {
    case failed(path: String, reason: String)
    case malformed(path: String, reason: String)
    /// Not safely ours (a link, another user's, open to others): a key in it may be planted or
    /// known, so it is refused rather than read (a configuration fault).
    case unsafe(path: String, reason: String)

    public var description: String {
        switch self {
        case .failed(let path, let reason): "\(path): \(reason)"
        case .malformed(let path, let reason): "\(path) is not valid: \(reason)"
        case .unsafe(let path, let reason): "\(path) is refused: \(reason)"
        }
    }
}
