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

    @Test func theIdentityOptionStandsBeforeOrAfterTheSubcommand() throws {
        let state = temporaryPath("cli-state")
        let before = spawnAndWait([ChildProcess.intercomPath, "--state-dir", state, "paired"])
        let after = spawnAndWait([ChildProcess.intercomPath, "paired", "--state-dir", state])
        #expect(before.status == 0 && after.status == 0)
        #expect(before.output.hasPrefix("this device: ") && before.output == after.output, "\(before.output) / \(after.output)")
    }
}
