import Foundation
import IntercomCall
import Testing
import TestSupport

/// What the Debian package (scripts/package) is made of, checked without building it: the
/// hardened unit, the example configuration, the man page and the completions. The package
/// itself is checked by `scripts/package --verify`, which scripts/package runs on every build.
@Suite struct PackageTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let unit = repository.appendingPathComponent("scripts/systemd/intercom.service").path
    static let exampleConfiguration = repository.appendingPathComponent("scripts/systemd/config.toml").path
    static let hasSystemdAnalyze = FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")

    /// The unit's settings, key by key (a key given twice keeps every value).
    static func unitSettings() throws -> [String: [String]] {
        var settings: [String: [String]] = [:]
        for line in try String(contentsOfFile: unit, encoding: .utf8).split(separator: "\n") {
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { continue }
            settings[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        return settings
    }

    @Test(.enabled(if: hasSystemdAnalyze, "systemd-analyze is not installed"))
    func theUnitsExposureIsAtMostThree() throws {
        let result = spawnAndWait(["systemd-analyze", "security", "--offline=yes", Self.unit], timeoutSeconds: 30)
        let line = try #require(result.output.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(result.output)")
        // "… intercom.service: 1.9 OK 🙂", or ":-)" where the locale has no emoji.
        let score = try #require(line.split(separator: " ").lazy.compactMap { Double($0) }.first, "\(line)")
        #expect(score <= 3.0, "\(line)")
    }

    @Test func theUnitRunsTheInstalledBinaryAsItsOwnUserWithAGroupReadableStatusFolder() throws {
        let settings = try Self.unitSettings()
        #expect(settings["ExecStart"] == ["/usr/bin/intercom daemon --config /etc/intercom/config.toml"])
        #expect(settings["User"] == ["intercom"] && settings["Group"] == ["intercom"])
        // Only groups every systemd system has: one that does not exist stops the unit.
        #expect(settings["SupplementaryGroups"] == ["audio"])
        #expect(settings["RuntimeDirectory"] == ["intercom"] && settings["RuntimeDirectoryMode"] == ["0750"])
        #expect(settings["StateDirectory"] == ["intercom"])
        let noRestart = Set((settings["RestartPreventExitStatus"]?.first ?? "").split(separator: " ").map(String.init))
        #expect(noRestart.isSuperset(of: ["64", "65", "66", "78"]))
        // The audio threads ask for SCHED_FIFO (JoinableThread), which RestrictRealtime=yes refuses.
        #expect(settings["RestrictRealtime"] == ["no"])
        #expect(settings["Documentation"]?.first?.contains("file:///usr/share/doc/intercom/Docs/raspberry-pi.md") == true)
    }

    @Test func theExampleConfigurationReadsBackAsItIsAndWithEverySettingUncommented() throws {
        let text = try String(contentsOfFile: Self.exampleConfiguration, encoding: .utf8)
        let asShipped = try ConfigurationFile.parse(text, path: "config.toml")
        #expect(asShipped.entries.isEmpty && asShipped.warnings.isEmpty, "\(asShipped.warnings)")

        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.wholeMatch(of: /# ([a-z-]+ = .*)/).map { String($0.1) } ?? String(line)
        }.joined(separator: "\n")
        let everything = try ConfigurationFile.parse(uncommented, path: "config.toml")
        #expect(everything.warnings.isEmpty, "\(everything.warnings)")
        let shown = Set(everything.entries.map(\.setting.path))
        let missing = ConfigurationSchema.settings.map(\.path).filter { !shown.contains($0) }
        #expect(missing.isEmpty, "settings the example does not show: \(missing)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs Debian's python3"))
    func theManPageCoversEverySubcommand() throws {
        // The page runs `intercom SUBCOMMAND --help` for each subcommand: a debug build on a
        // machine busy with other builds took over 30 s for them all, so the bound only catches
        // a hang.
        let page = spawnAndWait(["env", "-i", "HOME=~", "PATH=/usr/bin:/bin", "/usr/bin/python3",
                                 Self.repository.appendingPathComponent("scripts/manual.py").path, ChildProcess.intercomPath, "1.2.3", "2026-01-01"], timeoutSeconds: 300)
        #expect(page.status == 0)
        #expect(page.output.contains(".TH INTERCOM 1 \"2026-01-01\" \"intercom 1.2.3\""))
        for subcommand in ["talk", "daemon", "status", "peers", "pair", "paired", "unpair", "volume", "mute", "unmute", "page", "devices", "config", "loopback", "sdp", "relay"] {
            #expect(page.output.contains("\n.SS intercom \(subcommand)"), "no section for \(subcommand)")
        }
        // The options of a subcommand, with their help; the paths as a user who set nothing sees them.
        #expect(page.output.contains("\\fB\\-\\-status\\-socket\\fR \\fIPATH\\fR"))
        #expect(page.output.contains("/run/intercom/status.sock"))
        #expect(!page.output.contains("/root/"), "a path of the machine that made the page")
        #expect(!page.output.split(separator: "\n").contains { $0.hasPrefix(".") && !$0.hasPrefix(".\\\"") && !$0.hasPrefix(".TH") && !$0.hasPrefix(".SH") && !$0.hasPrefix(".SS") && !$0.hasPrefix(".TP") && !$0.hasPrefix(".PP") && !$0.hasPrefix(".br") }, "a text line read as a request")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            let file = temporaryPath("intercom.1")
            try page.output.write(toFile: file, atomically: true, encoding: .utf8)
            let rendered = spawnAndWait(["env", "MANWIDTH=80", "man", "-l", file], timeoutSeconds: 30)
            #expect(rendered.status == 0 && rendered.output.contains("intercom daemon"))
        }
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionsAreGenerated(shell: String) throws {
        let script = spawnAndWait(["env", "-i", "HOME=/nonexistent", ChildProcess.intercomPath, "--generate-completion-script", shell])
        #expect(script.status == 0)
        // Completion for the subcommands, not only for the default one.
        for subcommand in ["daemon", "status", "pair"] {
            #expect(script.output.contains(subcommand), "\(shell) completion lacks \(subcommand)")
        }
    }
}

extension EndToEndTests {
    /// The installed service's way of running the daemon, played without systemd.
    @Suite struct ServiceTests {
        /// The daemon as intercom.service runs it, without systemd: an unprivileged user and group
        /// with the unit's supplementary group, no new privileges, the unit's environment, the
        /// runtime folder as systemd makes it (0750, the service's group) and a NOTIFY_SOCKET this
        /// test listens on. Another user in the service's group reads the status; a user outside it
        /// cannot connect; pairing is refused to the group.
        @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root, to be other users"))
        func theDaemonRunsAsTheUnitRunsItAndItsGroupReadsTheStatus() throws {
            // Numeric ids no account has: the service's user and group, a member, a stranger.
            let (service, member, stranger): (UInt32, UInt32, UInt32) = (64_901, 64_902, 64_903)
            let audio = getgrnam("audio").map { $0.pointee.gr_gid } ?? 29
            let base = temporaryPath("unit")
            let runtime = base + "/run/intercom", state = base + "/lib/intercom", configuration = base + "/etc/intercom"
            for folder in [runtime, state, configuration] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            defer { try? FileManager.default.removeItem(atPath: base) }
            chown(runtime, service, service)
            chmod(runtime, 0o750)
            chown(state, service, service)
            chmod(state, 0o700)
            for folder in [base, base + "/run", base + "/lib", base + "/etc", configuration] { chmod(folder, 0o755) }
            let port = freeUDPPort()
            try """
                [network]
                discovery = false
                bind = "127.0.0.1"
                port = \(port)
                name = "service"

                [talk]
                mode = "vox"
                """.write(toFile: configuration + "/config.toml", atomically: true, encoding: .utf8)
            chmod(configuration + "/config.toml", 0o644)

            // systemd's end of NOTIFY_SOCKET.
            let systemd = try SystemdNotifyListener(path: base + "/run/notify.sock")

            let socketPath = runtime + "/status.sock"
            // setpriv and env exec the daemon: the child's PID is the daemon's.
            let daemon = try ChildProcess("setpriv", [
                "--reuid=\(service)", "--regid=\(service)", "--groups=\(audio)", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all",
                "env", "-i", "PATH=/usr/bin:/bin", "XDG_CONFIG_HOME=\(base)/etc", "STATE_DIRECTORY=\(state)", "RUNTIME_DIRECTORY=\(runtime)",
                "NOTIFY_SOCKET=\(systemd.path)", "WATCHDOG_USEC=1000000",
                ChildProcess.intercomPath, "daemon", "--status-socket", socketPath,
            ])
            defer { daemon.signal(SIGKILL) }
            systemd.collect(for: 10) { $0.contains { $0.hasPrefix("READY=1") } }
            #expect(systemd.messages.contains { $0.hasPrefix("READY=1") }, "\(systemd.messages) \(daemon.standardError)")

            var info = stat()
            #expect(lstat(socketPath, &info) == 0 && info.st_mode & 0o777 == 0o660 && info.st_uid == service && info.st_gid == service)
            #expect(lstat(state + "/identity", &info) == 0 && info.st_uid == service, "the identity is the service's")

            func status(as uid: UInt32, groups: [UInt32]) -> (status: Int32?, output: String) {
                let groupArgument = groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
                return spawnAndWait(["setpriv", "--reuid=\(uid)", "--regid=\(uid)", groupArgument, ChildProcess.intercomPath, "status", "--json", "--socket", socketPath])
            }
            let asMember = status(as: member, groups: [service])
            #expect(asMember.status == 0 && asMember.output.contains("\"name\":\"service\""), "\(asMember)")
            #expect(status(as: stranger, groups: []).status != 0, "a user outside the group connected")
            let pairing = spawnAndWait(["setpriv", "--reuid=\(member)", "--regid=\(member)", "--groups=\(service)", ChildProcess.intercomPath, "pair", "--socket", socketPath], timeoutSeconds: 10)
            #expect(pairing.status != 0, "a member of the group asked the daemon to pair")

            daemon.signal(SIGTERM)
            #expect(daemon.wait(seconds: 10) == 0, "\(daemon.standardError)")
            #expect(systemd.collect(for: 4) { $0.contains { $0.contains("STOPPING=1") } })
            #expect(!FileManager.default.fileExists(atPath: socketPath), "the socket is removed on the way out")
        }
    }
}
