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
    /// XDG says); an existing directory keeps its mode. Refuses a symbolic link or a directory
    /// that others may write to.
    public func prepare() throws(StateDirectoryError) {
        var components: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            components.append(component)
            let partial = "/" + components.joined(separator: "/")
            let isLast = components.count == path.split(separator: "/").count
            if mkdir(partial, isLast ? 0o700 : 0o755) != 0, errno != EEXIST {
                throw .cannotCreate(path: partial, reason: String(cString: strerror(errno)))
            }
        }
        var status = stat()
        guard lstat(path, &status) == 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .notADirectory(path) }
        guard status.st_mode & 0o022 == 0 || status.st_mode & S_ISVTX != 0 && status.st_uid == geteuid() else {
            throw .writableByOthers(path)
        }
    }
}

public enum StateDirectoryError: Error, Equatable, CustomStringConvertible {
    case noHome
    case cannotCreate(path: String, reason: String)
    case notADirectory(String)
    case writableByOthers(String)

    public var description: String {
        switch self {
        case .noHome: "no state directory: set --state-dir, STATE_DIRECTORY, XDG_STATE_HOME or HOME"
        case .cannotCreate(let path, let reason): "cannot create the state directory \(path): \(reason)"
        case .notADirectory(let path): "the state directory \(path) is not a directory (or is a symbolic link)"
        case .writableByOthers(let path): "the state directory \(path) is writable by others; keys are not kept there"
        }
    }
}
