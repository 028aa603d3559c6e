import Foundation

/// Runs a short command to completion with posix_spawn and waitpid, returning its exit
/// status and standard output. For tools whose exit Foundation's Process does not notice
/// (tmux's client, which daemonises its server, stays a zombie under it).
public func spawnAndWait(_ arguments: [String], timeoutSeconds: Double = 10) -> (status: Int32?, output: String) {
    let outputPath = temporaryPath("spawn.out")
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var pid: pid_t = 0
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    guard posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ) == 0 else { return (nil, "") }
    defer { try? FileManager.default.removeItem(atPath: outputPath) }
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    var status: Int32 = 0
    while waitpid(pid, &status, WNOHANG) == 0 {
        guard Date() < deadline else {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            return (nil, "")
        }
        usleep(10_000)
    }
    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    // WIFEXITED / WEXITSTATUS, which Swift does not import as functions.
    return (status & 0x7F == 0 ? (status >> 8) & 0xFF : nil, output)
}
