import CLinux
import Glibc
import Synchronization
import IntercomCore

/// A Unix stream socket on which a running intercom answers "what is going on": one request
/// line in, one reply out, then the connection closes. Only the owner may connect (mode
/// 0600 on the socket, 0700 on its folder), unless the folder was made for a group (systemd's
/// `RuntimeDirectory=` with mode 0750): then the group may connect too (0660) and read the
/// status, while everything else (pairing) stays with the owner and root. Anything that is not
/// a known request gets an error line; slow or oversized requests are cut off, so nothing a
/// client sends can stall or crash the daemon.
///
/// A client may pass an open file beside its request (SCM_RIGHTS: a page's recording, which
/// the daemon then reads with the client's rights rather than its own); the reply is made
/// while it is open, and it is closed after.
public final class StatusSocket: Sendable {
    public let path: String
    private let listener: Int32
    private let respond: @Sendable (_ request: [UInt8], _ client: Client) -> String
    /// The answering thread, set once it runs (it starts inside `init`, so it cannot be a `let`).
    private let thread = Mutex<JoinableThread?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// `$XDG_RUNTIME_DIR/intercom/status.sock`, else `/run/intercom/status.sock`.
    public static var defaultPath: String {
        let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/run"
        return runtime + "/intercom/status.sock"
    }

    /// The system service's socket (the unit's `RuntimeDirectory=intercom`), which `ask` tries
    /// when nothing is at the default path: a user's session has `XDG_RUNTIME_DIR` set, the
    /// service does not.
    public static let systemPath = "/run/intercom/status.sock"

    /// Who asked, as the kernel says, and what they passed.
    public struct Client: Sendable {
        /// The client runs as the daemon's user or as root.
        public let isOwnerOrRoot: Bool
        /// A file the client passed beside its request, open until the reply is made.
        public let passedFile: Int32?

        public init(isOwnerOrRoot: Bool, passedFile: Int32? = nil) {
            self.isOwnerOrRoot = isOwnerOrRoot
            self.passedFile = passedFile
        }
    }

    /// Binds the socket (replacing a stale one left by a killed daemon) and starts answering
    /// on its own thread; `respond` maps the bytes of a request (read with `StatusRequest`) and
    /// its client to the reply.
    public init(
        path: String = StatusSocket.defaultPath, respond: @escaping @Sendable (_ request: [UInt8], _ client: Client) -> String
    ) throws(StatusSocketError) {
        self.path = path
        self.respond = respond
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let groupShared = folder.isEmpty ? false : try Self.prepare(folder: folder, socket: path)
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw StatusSocketError(path: path, operation: "bind", code: ENAMETOOLONG)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StatusSocketError(path: path, operation: "socket", code: errno) }
        if Self.isStale(path) { unlink(path) }
        // 0600 (0660 in a group's folder) from the start: no moment in which another user
        // could connect.
        let bound = Self.bindPrivately(fd, at: path, folder: folder.isEmpty ? "." : folder, mode: groupShared ? 0o660 : 0o600)
        guard bound == 0, listen(fd, 8) == 0 else {
            let code = bound == 0 ? errno : bound
            close(fd)
            throw StatusSocketError(path: path, operation: "bind", code: code)
        }
        listener = fd
        var pipeEnds: [Int32] = [0, 0]
        _ = pipe(&pipeEnds)
        (wakeRead, wakeWrite) = (pipeEnds[0], pipeEnds[1])
        do {
            let started = try JoinableThread(name: "status") { [self] in serve() }
            thread.withLock { $0 = started }
        } catch {
            close(fd)
            throw StatusSocketError(path: path, operation: "thread", code: error.code)
        }
    }

    deinit { stop() }

    /// Creates the socket's folder (0700) if it is missing; an existing one keeps its mode (it
    /// may be systemd's `RuntimeDirectory=` or a shared one such as /tmp), but one that others
    /// may write is used only if it is sticky and whatever is at `socket` is ours. Returns
    /// whether the folder is a group's: its group may enter it, others may not.
    @discardableResult
    static func prepare(folder: String, socket: String) throws(StatusSocketError) -> Bool {
        if mkdir(folder, 0o700) == 0 {
            // Exactly 0700, whatever the umask took.
            chmod(folder, 0o700)
        } else if errno != EEXIST {
            throw StatusSocketError(path: folder, operation: "mkdir", code: errno)
        }
        var status = stat()
        guard lstat(folder, &status) == 0 else { throw StatusSocketError(path: folder, operation: "stat", code: errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw StatusSocketError(path: folder, operation: "use", code: ENOTDIR) }
        guard status.st_mode & 0o022 != 0 else { return status.st_mode & 0o010 != 0 && status.st_mode & 0o007 == 0 }
        var existing = stat()
        let ours = lstat(socket, &existing) != 0 || existing.st_uid == geteuid()
        guard status.st_mode & S_ISVTX != 0, ours else { throw StatusSocketError(path: folder, operation: "use (others may write to it)", code: EPERM) }
        return false
    }

    /// Stops answering and removes the socket file.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        thread.withLock { $0.take() }?.join()
        close(listener)
        close(wakeRead)
        close(wakeWrite)
        unlink(path)
    }

    private func serve() {
        while true {
            var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            guard poll(&descriptors, 2, -1) >= 0 || errno == EINTR else { return }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            answer(client)
            close(client)
        }
    }

    /// Reads one line (at most `StatusRequest.maximumBytes`, within a second) and replies.
    private func answer(_ client: Int32) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 128)
        var passedFile: Int32?
        defer { if let passedFile { close(passedFile) } }
        while request.count <= StatusRequest.maximumBytes, !request.contains(UInt8(ascii: "\n")) {
            var descriptor: Int32 = -1
            let count = intercom_receive_with_descriptor(client, &buffer, buffer.count, &descriptor)
            if descriptor >= 0 {
                // One file per request: any other is closed at once.
                if passedFile == nil { passedFile = descriptor } else { close(descriptor) }
            }
            guard count > 0 else { break }
            request += buffer.prefix(count)
        }
        let reply = respond(request, Client(isOwnerOrRoot: Self.isOwnerOrRoot(client), passedFile: passedFile))
        var bytes = Array(reply.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeMutableBytes { send(client, $0.address(at: offset), $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// The connected client runs as the daemon's user or as root (its credentials as the
    /// kernel saw them at connect).
    private static func isOwnerOrRoot(_ client: Int32) -> Bool {
        // struct ucred (pid, uid, gid), which Glibc's module leaves out (it needs _GNU_SOURCE).
        var credentials = PeerCredentials()
        var size = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(client, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else { return false }
        return credentials.uid == geteuid() || credentials.uid == 0
    }

    /// Where a daemon's socket is, asked for at `path`: `path` itself, or at the default path,
    /// the system service's when only it is there (as `ask` goes on to it); nil when neither is.
    public static func running(at path: String) -> String? {
        if access(path, F_OK) == 0 { return path }
        return path == defaultPath && access(systemPath, F_OK) == 0 ? systemPath : nil
    }

    /// Sends `request` (with `file`, an open descriptor, beside it) to the socket at `path`
    /// and returns the reply. At the default path, a missing socket sends the request to the
    /// system service's (`systemPath`) instead.
    public static func ask(_ request: StatusRequest, path: String = StatusSocket.defaultPath, passing file: Int32? = nil) throws(StatusSocketError) -> String {
        do {
            return try askOnce(request, path: path, passing: file)
        } catch where error.code == ENOENT && path == defaultPath && path != systemPath {
            return try askOnce(request, path: systemPath, passing: file)
        }
    }

    private static func askOnce(_ request: StatusRequest, path: String, passing file: Int32?) throws(StatusSocketError) -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StatusSocketError(path: path, operation: "socket", code: errno) }
        defer { close(fd) }
        guard withAddress(path, { connect(fd, $0, $1) }) == 0 else { throw StatusSocketError(path: path, operation: "connect", code: errno) }
        var bytes = Array((request.line + "\n").utf8)
        let sent = if let file {
            intercom_send_with_descriptor(fd, &bytes, bytes.count, file)
        } else {
            send(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL))
        }
        guard sent >= 0 else { throw StatusSocketError(path: path, operation: "send", code: errno) }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            reply += buffer.prefix(count)
        }
        return String(decoding: reply, as: UTF8.self)
    }

    /// Binds `fd` at `path` with `mode`, without the umask: the process's umask is every
    /// thread's, and one that creates a folder or file while it is narrowed for the socket gets
    /// the socket's mask (a folder without its search bit). So the socket is bound in a fresh
    /// folder of its own beside `path`, which only we may enter, given its mode there, and
    /// linked into place, which fails, as binding would (with its error), when something is
    /// already at `path`.
    /// Returns 0 or the error number.
    private static func bindPrivately(_ fd: Int32, at path: String, folder: String, mode: mode_t) -> Int32 {
        var template = Array((folder + "/.s-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { return errno }
        let privateFolder = String(cString: made)
        defer { rmdir(privateFolder) }
        let temporary = privateFolder + "/s"
        guard temporary.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return ENAMETOOLONG }
        defer { unlink(temporary) }
        guard chmod(privateFolder, 0o700) == 0, withAddress(temporary, { bind(fd, $0, $1) }) == 0, chmod(temporary, mode) == 0,
              link(temporary, path) == 0
        else { return errno == EEXIST ? EADDRINUSE : errno }
        return 0
    }

    /// A socket file nobody listens on any more (its daemon was killed).
    private static func isStale(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return withAddress(path) { connect(fd, $0, $1) } != 0 && errno == ECONNREFUSED
    }

    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}

/// The kernel's `struct ucred`.
private struct PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}

public struct StatusSocketError: Error, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let code: Int32
    public var description: String {
        let hint = code == ENOENT || code == ECONNREFUSED ? " (is the intercom daemon running?)" : ""
        return "\(path): \(operation) failed: \(String(cString: strerror(code)))\(hint)"
    }
}
