import Glibc

/// Where a device keeps its identity and the devices it trusts. In order: `--state-dir`,
/// `$STATE_DIRECTORY` (systemd's `StateDirectory=`), `$XDG_STATE_HOME/intercom`, and
/// `~/.local/state/intercom`.
public struct StateDirectory: Sendable, Equatable, CustomStringConvertible {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public static func resolve(explicit: String?, environment: [String: String]) throws(StateDirectoryError) -> StateDirectory {
        if let explicit, !explicit.isEmpty { return StateDirectory(path: explicit) }
        // systemd may list several directories separated by colons; ours is the first.
        if let fromSystemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            return StateDirectory(path: String(fromSystemd))
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return StateDirectory(path: xdg + "/intercom") }
        guard let home = environment["HOME"], home.hasPrefix("/") else { throw .noHome }
        return StateDirectory(path: home + "/.local/state/intercom")
    }

    public var description: String { path }

    public func file(_ name: String) -> String { path + "/" + name }

    /// Creates the directory (0700) and missing parents (0755 for ours under $HOME's tree, as
    /// XDG says); an existing directory keeps its mode. Then opens it as `open` does.
    @discardableResult
    public func prepare() throws(StateDirectoryError) -> Handle {
        var components: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            components.append(component)
            let partial = "/" + components.joined(separator: "/")
            let isLast = components.count == path.split(separator: "/").count
            if mkdir(partial, isLast ? 0o700 : 0o755) != 0, errno != EEXIST {
                throw .cannotCreate(path: partial, reason: String(cString: strerror(errno)))
            }
        }
        guard let handle = try open() else { throw .cannotCreate(path: path, reason: "it vanished as it was made") }
        return handle
    }

    /// The directory, opened and checked, or nil when there is none. It must be a directory (not
    /// a symbolic link), owned by the effective user, and writable by no one else (a sticky
    /// shared directory included: another user could have made the files in it before us).
    /// The checks are made on the descriptor (`fstat`), and every file is reached through it
    /// (`openat`): a directory swapped in under the same path afterwards is never used.
    public func open() throws(StateDirectoryError) -> Handle? {
        let descriptor = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP, ENOTDIR: throw .notADirectory(path)
            case let code: throw .cannotCreate(path: path, reason: String(cString: strerror(code)))
            }
        }
        let handle = Handle(descriptor: descriptor, path: path)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        guard status.st_uid == geteuid() else { throw .foreignOwner(path, owner: status.st_uid, user: geteuid()) }
        guard status.st_mode & 0o022 == 0 else { throw .writableByOthers(path) }
        try checkParents(of: descriptor, status: status)
        return handle
    }

    /// The directories above it, up to `/`, walked from the open directory itself (`..`, so
    /// that what is checked is where it really is, whatever links its path went through): each
    /// must be root's or the effective user's, and writable by no one else unless sticky (in a
    /// sticky directory, as `/tmp`, only an entry's owner may rename or remove it). Otherwise
    /// another user could rename the state directory away and put one of theirs in its place,
    /// which the next start would open.
    private func checkParents(of descriptor: Int32, status: stat) throws(StateDirectoryError) {
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let real = realpath(path, &resolved) != nil
            ? String(decoding: resolved.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : path
        var components = real.split(separator: "/")
        var current = dup(descriptor)
        var child = status
        defer { if current >= 0 { close(current) } }
        while current >= 0 {
            let parent = openat(current, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            close(current)
            current = parent
            guard parent >= 0 else { throw .cannotCreate(path: path, reason: "cannot open a directory above it: \(String(cString: strerror(errno)))") }
            var above = stat()
            guard fstat(parent, &above) == 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
            // `/` is its own parent.
            if above.st_dev == child.st_dev, above.st_ino == child.st_ino { return }
            components = components.dropLast()
            let name = "/" + components.joined(separator: "/")
            if above.st_uid != 0, above.st_uid != geteuid() {
                throw .unsafeParent(path, parent: name, reason: "belongs to user \(above.st_uid)")
            }
            if above.st_mode & 0o022 != 0, above.st_mode & S_ISVTX == 0 {
                throw .unsafeParent(path, parent: name, reason: "is writable by others (and not sticky)")
            }
            child = above
        }
    }

    /// An open, checked state directory; the files in it are opened relative to it.
    public final class Handle: Sendable {
        let descriptor: Int32
        public let path: String

        init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        deinit { close(descriptor) }

        func file(_ name: String) -> String { path + "/" + name }
    }
}

public enum StateDirectoryError: Error, Equatable, CustomStringConvertible {
    case noHome
    case cannotCreate(path: String, reason: String)
    case notADirectory(String)
    case writableByOthers(String)
    case foreignOwner(String, owner: uid_t, user: uid_t)
    /// A directory above it lets another user swap the state directory.
    case unsafeParent(String, parent: String, reason: String)

    /// A directory that is there but not safely ours: keys kept in it could have been planted or
    /// read by someone else, so it is refused rather than used (a configuration fault).
    public var isUnsafe: Bool {
        switch self {
        case .notADirectory, .writableByOthers, .foreignOwner, .unsafeParent: true
        case .noHome, .cannotCreate: false
        }
    }

    public var description: String {
        switch self {
        case .noHome: "no state directory: set --state-dir, STATE_DIRECTORY, XDG_STATE_HOME or HOME"
        case .cannotCreate(let path, let reason): "cannot create the state directory \(path): \(reason)"
        case .notADirectory(let path): "the state directory \(path) is not a directory (or is a symbolic link)"
        case .writableByOthers(let path): "the state directory \(path) is writable by others; keys are not kept there"
        case .foreignOwner(let path, let owner, let user):
            "the state directory \(path) belongs to user \(owner), not to this user (\(user)); keys are not kept there"
        case .unsafeParent(let path, let parent, let reason):
            "the state directory \(path) is refused: \(parent) above it \(reason), who could swap the directory; keys are not kept there"
        }
    }
}
