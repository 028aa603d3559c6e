import Foundation
import Synchronization

/// A LAN of network namespaces built by `scripts/lab/lan-lab`: hosts 1…N on one bridge
/// (10.77.0.i/24), each with its own D-Bus system bus and avahi-daemon.
///
/// Each lab has a name of its own (test process id and a counter), so labs run side by
/// side. `shutDown()` (or deinit) stops its daemons by PID and deletes its namespaces;
/// labs left behind by a crashed test process are taken down by the next one.
public final class LANLab: @unchecked Sendable {
    public let name: String
    public let hostCount: Int
    private let isShutDown = Mutex(false)

    private static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/lab/lan-lab").path
    private static let labsCreated = Mutex(0)
    private static let collectOrphans: Void = { _ = try? runScript(["gc"]) }()

    /// Why labs cannot be built here, or nil when they can: they need root and the tools
    /// `scripts/setup` installs.
    public static let unavailableReason: String? = {
        guard getuid() == 0 else { return "the LAN lab needs root (network namespaces)" }
        let tools = ["/usr/sbin/avahi-daemon", "/usr/bin/dbus-daemon", "/usr/bin/dbus-send", "/usr/bin/avahi-browse", "/usr/bin/unshare"]
        if let missing = tools.first(where: { !FileManager.default.isExecutableFile(atPath: $0) }) {
            return "the LAN lab needs \(missing) (scripts/setup installs it)"
        }
        guard ["/usr/sbin/ip", "/usr/bin/ip", "/sbin/ip"].contains(where: FileManager.default.isExecutableFile(atPath:)) else {
            return "the LAN lab needs ip from iproute2 (scripts/setup installs it)"
        }
        return nil
    }()

    /// Whether labs can be built on this machine.
    public static var isAvailable: Bool { unavailableReason == nil }

    /// Builds `hosts` hosts; those listed in `withoutAvahi` get a D-Bus but no avahi-daemon.
    public init(hosts: Int, withoutAvahi: [Int] = []) throws {
        Self.collectOrphans
        let serial = Self.labsCreated.withLock { count in
            count += 1
            return count
        }
        name = "t\(getpid())x\(serial)"
        hostCount = hosts
        do {
            try Self.runScript(["-l", name, "up", String(hosts)] + withoutAvahi.flatMap { ["--no-avahi", "h\($0)"] })
        } catch {
            // `up` takes a half-built lab down itself, unless it was killed on a timeout.
            shutDown()
            throw error
        }
    }

    deinit { shutDown() }

    /// Host `host`'s IPv4 address on the lab LAN, such as "10.77.0.2".
    public func ipv4Address(_ host: Int) -> String {
        "10.77.0.\(host)"
    }

    /// Starts `executable` (a path, or a name on PATH) in host `host` with that host's
    /// DBUS_SYSTEM_BUS_ADDRESS. The process keeps its PID through the namespace switch, so
    /// `ChildProcess.signal` reaches it.
    public func run(_ host: Int, _ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess("/bin/bash", [Self.script, "-l", name, "exec", "h\(host)", executable] + arguments, environment: environment)
    }

    /// Starts the `intercom` under test in host `host`.
    public func intercom(_ host: Int, _ arguments: [String]) throws -> ChildProcess {
        try run(host, ChildProcess.intercomPath, arguments)
    }

    /// Stops host `host`'s avahi-daemon (by PID); it says goodbye for what it published.
    public func stopAvahi(_ host: Int) throws {
        try Self.runScript(["-l", name, "avahi-stop", "h\(host)"])
    }

    /// Starts host `host`'s avahi-daemon and waits until it runs.
    public func startAvahi(_ host: Int) throws {
        try Self.runScript(["-l", name, "avahi-start", "h\(host)"])
    }

    /// Stops and starts host `host`'s avahi-daemon, waiting until the new one runs.
    public func restartAvahi(_ host: Int) throws {
        try Self.runScript(["-l", name, "avahi-restart", "h\(host)"])
    }

    /// Drops `percent` % of the packets arriving at host `host` (nftables); 0 stops dropping.
    public func setLoss(_ host: Int, percent: Int) throws {
        try Self.runScript(["-l", name, "loss", "h\(host)", String(percent)])
    }

    /// Stops every daemon of the lab and deletes its namespaces. Safe to call more than once.
    public func shutDown() {
        let wasShutDown = isShutDown.withLock { done in
            defer { done = true }
            return done
        }
        guard !wasShutDown else { return }
        _ = try? Self.runScript(["-l", name, "down"])
    }

    @discardableResult
    private static func runScript(_ arguments: [String]) throws -> String {
        let process = try ChildProcess("/bin/bash", [script] + arguments, environment: ["LAN_LAB_OWNER": String(getpid())])
        let status = process.wait(seconds: 60)
        guard status == 0 else {
            throw LANLabError(command: "lan-lab " + arguments.joined(separator: " "), status: status, output: process.standardError)
        }
        return process.standardOutput
    }
}

/// A `lan-lab` command that failed or timed out.
public struct LANLabError: Error, CustomStringConvertible {
    public let command: String
    /// The exit status, or nil after a timeout.
    public let status: Int32?
    public let output: String

    public var description: String {
        "\(command) \(status.map { "exited with \($0)" } ?? "timed out"): \(output)"
    }
}
