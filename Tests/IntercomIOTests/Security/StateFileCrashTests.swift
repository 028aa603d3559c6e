import Foundation
import IntercomCore
import IntercomIO
import Testing
import TestSupport

@Suite("State files survive a crash")
struct StateFileCrashTests {
    /// A writer killed (SIGKILL) at random moments, over and over, while it rewrites the trusted
    /// list: after each kill the list is whole and is the last version the writer reported or
    /// the one it was writing, never part of one, and the identity it made is whole too.
    @Test func aWriterKilledAtRandomLeavesTheOldListOrTheNewOneNeverPartOfEither() async throws {
        try await offTheRunner {
            let writer = URL(fileURLWithPath: ChildProcess.intercomPath).deletingLastPathComponent().appendingPathComponent("StateWriter").path
            let directory = StateDirectory(path: temporaryPath("crash-state"))
            let store = TrustedDeviceStore(directory: directory)
            let padding = String(repeating: "x", count: 4_000)
            var generator = SeededGenerator(seed: 31)
            var (kills, written) = (0, 0)
            // The bound only catches a writer that stopped writing: with both cores busy with
            // other builds, 200 versions took more than 20 s.
            let started = Date()
            while written < 200 || kills < 30, Date().timeIntervalSince(started) < 180 {
                let process = try ChildProcess(writer, [directory.path])
                // Killed only once it has written in this run (each run writes), then at a random moment.
                let deadline = Date().addingTimeInterval(10)
                while process.standardOutput.isEmpty, Date() < deadline { usleep(1_000) }
                usleep(UInt32.random(in: 0...8_000, using: &generator))
                process.signal(SIGKILL)
                process.wait(seconds: 10)
                kills += 1
                let reported = process.standardOutput.split(separator: "\n").compactMap { Int($0) }
                #expect(!reported.isEmpty, "the writer wrote nothing: \(process.standardError)")
                let devices = try store.load()
                let versions = devices.compactMap { Int($0.name.prefix { $0 != " " }) }
                #expect(devices.allSatisfy { $0.name.hasSuffix(" " + padding) } && versions.count == devices.count)
                let newest = versions.max() ?? 0
                let last = reported.last ?? written
                #expect(newest == last || newest == last + 1, "after kill \(kills): version \(newest) on disk, \(last) reported")
                written = newest
                _ = try DeviceIdentity.loadOrCreate(in: directory)
                // What a killed writer leaves behind, the next one clears: never more than one.
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("trusted.json.") }
                #expect(leftovers.count <= 1, "\(leftovers)")
            }
            #expect(written >= 200 && kills >= 30, "\(written) versions, \(kills) kills in \(Date().timeIntervalSince(started)) s")
        }
    }
}
