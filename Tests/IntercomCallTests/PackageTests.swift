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
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        #expect(score <= 3.0, "\(line)")
    }

    @Test func theUnitRunsTheInstalledBinaryAsItsOwnUserWithAGroupReadableStatusFolder() throws {
        let settings = try Self.unitSettings()
        #expect(settings["ExecStart"] == ["/usr/bin/intercom daemon"])
        #expect(settings["User"] == ["intercom"] && settings["Group"] == ["intercom"])
        // Only groups every systemd system has: one that does not exist stops the unit.
        #expect(settings["SupplementaryGroups"] == ["audio"])
        #expect(settings["RuntimeDirectory"] == ["intercom"] && settings["RuntimeDirectoryMode"] == ["0750"])
        #expect(settings["StateDirectory"] == ["intercom"])
        let noRestart = Set((settings["RestartPreventExitStatus"]?.first ?? "").split(separator: " ").map(String.init))
        #expect(noRestart.isSuperset(of: ["64", "65", "78"]))
        // The audio threads ask for SCHED_FIFO (JoinableThread), which RestrictRealtime=yes refuses.
        #expect(settings["RestrictRealtime"] == ["no"])
        #expect(settings["Documentation"]?.first?.contains("file:///usr/share/doc/intercom/Docs/raspberry-pi.md") == true)
        #expect(settings["Environment"]?.contains("XDG_CONFIG_HOME=/etc") == true)
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
        let page = spawnAndWait(["env", "-i", "HOME=~", "PATH=/usr/bin:/bin", "/usr/bin/python3",
                                 Self.repository.appendingPathComponent("scripts/manual.py").path, ChildProcess.intercomPath, "1.2.3", "2026-01-01"], timeoutSeconds: 30)
        #expect(page.status == 0)
        #expect(page.output.contains(".TH INTERCOM 1 \"2026-01-01\" \"intercom 1.2.3\""))
        for subcommand in ["talk", "daemon", "status", "peers", "pair", "paired", "unpair", "devices", "config", "loopback", "sdp", "relay"] {
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
