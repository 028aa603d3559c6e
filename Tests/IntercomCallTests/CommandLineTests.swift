import Foundation
import Testing
import TestSupport

/// The command line's conventions, checked on the built executable.
@Suite struct CommandLineTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func versionComesFromTheVersionFile() throws {
        let expected = try String(contentsOf: Self.repository.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let printed = spawnAndWait([ChildProcess.intercomPath, "--version"])
        #expect(printed.status == 0)
        #expect(printed.output.trimmingCharacters(in: .whitespacesAndNewlines) == expected)
    }

    /// A shell starts background jobs with SIGINT ignored, and the soak and the benchmark stop
    /// their relays with it: the relay stops on SIGINT and SIGTERM whatever it inherited, and
    /// says what it relayed.
    @Test(arguments: [SIGINT, SIGTERM]) func theRelayStopsOnASignalItInheritedIgnored(signal: Int32) async throws {
        let (port, otherPort) = (freeUDPPort(), freeUDPPort())
        let relay = try ChildProcess("/bin/sh", [
            "-c", "trap '' INT TERM; exec \"$0\" relay --listen-a 127.0.0.1:\(port) --listen-b 127.0.0.1:\(otherPort) --peer-b 127.0.0.1:9 --network wifi",
            ChildProcess.intercomPath,
        ])
        #expect(try await offTheRunner { waitForUDPListener(port: port) })
        relay.signal(signal)
        #expect(try await relay.finished(within: 3) == 0, "\(relay.standardError)")
        #expect(relay.standardOutput.contains("received"), "\(relay.standardOutput)")
    }

    @Test func theIdentityOptionStandsBeforeOrAfterTheSubcommand() throws {
        let state = temporaryPath("cli-state")
        let before = spawnAndWait([ChildProcess.intercomPath, "--state-dir", state, "paired"])
        let after = spawnAndWait([ChildProcess.intercomPath, "paired", "--state-dir", state])
        #expect(before.status == 0 && after.status == 0)
        #expect(before.output.hasPrefix("this device: ") && before.output == after.output, "\(before.output) / \(after.output)")
    }

    /// What a failure prints and the sysexits(3) code it exits with: usage errors with their usage
    /// text (64), faults met while running as one line without it.
    static func failure(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32?, errors: String) {
        let process = try ChildProcess(ChildProcess.intercomPath, arguments, environment: environment)
        let status = process.wait(seconds: 15)
        return (status, process.standardError)
    }

    /// State that is not safely ours stops a call and the state commands with 78 and the path:
    /// a state directory another user owns, an identity others may read (0644), a trusted list
    /// others may change (0666), a directory others may write. Nothing is made or changed there.
    @Test func unsafeStateIsRefusedWithItsPath() throws {
        let call = ["--no-discovery", "--port", "\(freeUDPPort())", "--duration", "1"]
        let foreign: String
        if geteuid() == 0 {
            foreign = temporaryPath("foreign-state")
            try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
            chmod(foreign, 0o700)
            chown(foreign, 65534, 65534)
        } else {
            foreign = "/usr"  // root's
        }
        for command in [call, ["paired"], ["peers", "--wait", "0"]] {
            let refused = try Self.failure(command + ["--state-dir", foreign])
            #expect(refused.status == 78 && refused.errors.contains(foreign) && refused.errors.contains("belongs to user"), "\(command): \(refused)")
        }
        #expect(!FileManager.default.fileExists(atPath: foreign + "/identity"))
        // A directory above the state directory that others may write lets them swap it.
        let open = temporaryPath("open-parent")
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
        chmod(open, 0o777)
        let underOpen = try Self.failure(call + ["--state-dir", open + "/state"])
        #expect(underOpen.status == 78 && underOpen.errors.contains(open) && underOpen.errors.contains("could swap"), "\(underOpen)")

        let state = temporaryPath("loose-state")
        #expect(spawnAndWait([ChildProcess.intercomPath, "paired", "--state-dir", state]).status == 0)
        let identity = state + "/identity", trusted = state + "/trusted.json"
        chmod(identity, 0o644)
        let looseKey = try Self.failure(call + ["--state-dir", state])
        #expect(looseKey.status == 78 && looseKey.errors.contains(identity) && looseKey.errors.contains("0644"), "\(looseKey)")
        chmod(identity, 0o600)
        try Data("[]".utf8).write(to: URL(fileURLWithPath: trusted))
        chmod(trusted, 0o666)
        for command in [call, ["paired"]] {
            let looseList = try Self.failure(command + ["--state-dir", state])
            #expect(looseList.status == 78 && looseList.errors.contains(trusted) && looseList.errors.contains("0666"), "\(command): \(looseList)")
        }
        chmod(trusted, 0o600)
        chmod(state, 0o777)
        let shared = try Self.failure(call + ["--state-dir", state])
        #expect(shared.status == 78 && shared.errors.contains(state) && shared.errors.contains("writable by others"), "\(shared)")
    }

    @Test func everyKindOfFailureHasItsOwnExitCode() throws {
        let port = "\(freeUDPPort())"
        let call = ["--no-discovery", "--port", port, "--duration", "1"]
        let usage = try Self.failure(call + ["--vox-threshold", "0"])
        #expect(usage.status == 64 && usage.errors.contains("Usage:"), "\(usage)")
        let typo = try Self.failure(call + ["--prot", "5"])
        #expect(typo.status == 64 && typo.errors.contains("Did you mean '--port'?"), "\(typo)")
        let ignored = try Self.failure(["paired", "--mode", "vox"])
        #expect(ignored.status == 64, "an option the subcommand does not take: \(ignored)")

        let missing = temporaryPath("missing.wav")
        let noInput = try Self.failure(call + ["--input-file", missing])
        #expect(noInput.status == 66 && noInput.errors.contains(missing) && !noInput.errors.contains("Usage:"), "\(noInput)")
        let junk = temporaryPath("junk.wav")
        try Data("RIFF....WAVEjunk".utf8).write(to: URL(fileURLWithPath: junk))
        let badInput = try Self.failure(call + ["--input-file", junk])
        #expect(badInput.status == 65 && !badInput.errors.contains("Usage:"), "\(badInput)")
        let link = temporaryPath("link.wav")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: junk)
        let refused = try Self.failure(call + ["--output-file", link])
        #expect(refused.status == 73 && refused.errors.contains(link) && !refused.errors.contains("Usage:"), "\(refused)")

        let home = temporaryPath("xdg-bad")
        try FileManager.default.createDirectory(atPath: home + "/intercom", withIntermediateDirectories: true)
        try "[network]\nport = \"abc\"\n".write(toFile: home + "/intercom/config.toml", atomically: true, encoding: .utf8)
        let configuration = try Self.failure(call, environment: ["XDG_CONFIG_HOME": home])
        #expect(configuration.status == 78 && configuration.errors.contains("config.toml:2"), "\(configuration)")

        let holder = LoopbackUDP(port: Int(port)!)
        let busy = try Self.failure(call + ["--bind", "127.0.0.1"])
        #expect(busy.status == 69 && busy.errors.contains(port) && !busy.errors.contains("Usage:"), "\(busy)")
        _ = holder
    }

    /// Under systemd (stderr is the journal, as `$JOURNAL_STREAM` says), log lines carry their
    /// priority and no timestamp; `--quiet` keeps warnings and errors.
    @Test(arguments: [false, true]) func logsSpeakTheJournalsLanguage(quiet: Bool) throws {
        let log = temporaryPath("journal.log")
        let call = "\(ChildProcess.intercomPath) --no-discovery --port \(freeUDPPort()) --duration 0.5\(quiet ? " --quiet" : "")"
        // As systemd does: stderr is a stream whose device and inode the variable names.
        let result = spawnAndWait(["/bin/sh", "-c", "exec 2>\(log); JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec \(call)"])
        #expect(result.status == 0, "\(result.output)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(!lines.isEmpty || quiet)
        #expect(lines.allSatisfy { $0.range(of: #"^<[0-7]>intercom: "#, options: .regularExpression) != nil }, "\(lines)")
        #expect(!lines.contains { $0.range(of: #"\d{4}-\d\d-\d\dT"#, options: .regularExpression) != nil }, "a timestamp in \(lines)")
        if quiet {
            #expect(!lines.contains { $0.hasPrefix("<6>") || $0.hasPrefix("<7>") }, "\(lines)")
        } else {
            #expect(lines.contains { $0.hasPrefix("<6>intercom: ") && $0.contains("call started") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("<4>") }, "the missing sound card is a warning: \(lines)")
        }
    }

    /// Without a sound card the status lines say so in words, rather than show a call that seems fine.
    @Test func aMissingSoundDeviceIsNamedOnTheStatusLines() throws {
        let process = try ChildProcess.intercom(["--no-discovery", "--port", "\(freeUDPPort())", "--duration", "1", "--capture", "nosuchcard", "--playback", "nosuchcard"])
        #expect(process.wait(seconds: 15) == 0, "\(process.standardError)")
        let lines = process.standardOutput
        #expect(lines.contains("no microphone: 'nosuchcard' is missing (retrying)"), "\(lines)")
        #expect(lines.contains("no speaker: 'nosuchcard' is missing (retrying)"), "\(lines)")
    }
}
