import Foundation

/// A program started by a test, stopped by its PID (never by name), whose output is kept.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let outputFile: URL
    private let errorFile: URL

    /// The `intercom` executable built next to the test bundle.
    public static var intercomPath: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("intercom").path
    }

    /// The XDG state home of the intercom processes a test run starts: they share one device
    /// identity, so they trust each other as a user's own processes do. Tests that need
    /// strangers give them `--state-dir`s of their own.
    public static let sharedStateHome = FileManager.default.temporaryDirectory.appendingPathComponent("intercom-test-state-\(getpid())").path

    /// This process's environment with the shared state home, for every child (however it is
    /// started: directly, through setsid, or inside a lab host).
    public static var testEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": sharedStateHome]) { $1 }
    }

    /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let folder = FileManager.default.temporaryDirectory
        let tag = "\(getpid())-\(UUID().uuidString.prefix(8))"
        outputFile = folder.appendingPathComponent("child-\(tag).out")
        errorFile = folder.appendingPathComponent("child-\(tag).err")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        process.environment = Self.testEnvironment.merging(environment ?? [:]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
    }

    /// Starts the `intercom` executable under test.
    public static func intercom(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(intercomPath, arguments)
    }

    public var pid: Int32 { process.processIdentifier }

    /// Waits for the process to end, up to `seconds`; then kills it by PID and reports a timeout.
    @discardableResult
    public func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        guard !process.isRunning else {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    /// `wait(seconds:)` for async tests, on a thread of its own: a test that blocks one of the
    /// runner's few threads holds up every other test's sleeps and waits.
    @discardableResult
    public func finished(within seconds: Double) async throws -> Int32? {
        try await offTheRunner { self.wait(seconds: seconds) }
    }

    /// Sends `signal` to the process by its PID.
    public func signal(_ signal: Int32) {
        if process.isRunning { kill(pid, signal) }
    }

    public var standardOutput: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: outputFile)
        try? FileManager.default.removeItem(at: errorFile)
    }
}

/// A free UDP port on loopback, found by binding port 0 and letting go of it.
public func freeUDPPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Runs `body`, which blocks, on a thread of its own rather than one of the test runner's.
public func offTheRunner<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Whether something listens on UDP `port` (any address, IPv4 or IPv6), as the kernel's socket
/// tables say.
public func isListeningOnUDP(port: Int) -> Bool {
    let local = String(format: ":%04X ", port)
    return ["/proc/net/udp", "/proc/net/udp6"].contains { table in
        // Each row: "sl local_address rem_address ..."; the local address ends in ":PORT".
        let rows = (try? String(contentsOfFile: table, encoding: .utf8))?.split(separator: "\n").dropFirst() ?? []
        return rows.contains { $0.split(separator: " ").dropFirst().first.map { ($0 + " ").hasSuffix(local) } ?? false }
    }
}

/// A fresh temporary file path for a test.
public func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("intercom-test-\(getpid())-\(UUID().uuidString.prefix(8))-\(name)").path
}
