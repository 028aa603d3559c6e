import Glibc

/// Runs a program found on `PATH` with `arguments` (the first is its name), waits for it and
/// returns its exit status; a program killed by a signal returns 128 + the signal's number.
public func runProgram(_ arguments: [String]) throws(ChildProcessError) -> Int32 {
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    // The child starts with every signal at its default and none blocked, whatever this
    // process has ignored or blocked for its own signal handling.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var signals = sigset_t()
    sigemptyset(&signals)
    posix_spawnattr_setsigmask(&attributes, &signals)
    sigfillset(&signals)
    posix_spawnattr_setsigdefault(&attributes, &signals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var child = pid_t()
    let spawned = posix_spawnp(&child, arguments[0], nil, &attributes, argv, environ)
    guard spawned == 0 else { throw ChildProcessError(program: arguments[0], code: spawned) }
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 {
        guard errno == EINTR else { throw ChildProcessError(program: arguments[0], code: errno) }
    }
    let signal = status & 0x7F
    return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let program: String
    public let code: Int32
    public var description: String { "\(program) could not run: \(String(cString: strerror(code)))" }
}
