import Foundation
import IntercomCall
import IntercomCore
import Testing
import TestSupport

extension NetworkEndToEndTests {
    /// `intercom daemon` started as systemd would: no terminal, its own session, stdin from /dev/null.
    @Suite struct DaemonTests {
        /// A daemon and the paths it uses; stopped by its PID.
        final class RunningDaemon {
            let process: ChildProcess
            let socket: String
            let port: Int
            let output: String

            init(port: Int, peer: Int?, extra: [String] = [], environment: [String: String] = [:], writesOutput: Bool = true) throws {
                self.port = port
                // In a folder of its own, which the daemon makes (as systemd's RuntimeDirectory would be).
                socket = temporaryPath("run") + "/status.sock"
                output = temporaryPath("daemon-out.wav")
                var arguments = ["daemon", "--no-discovery", "--port", "\(port)", "--status-socket", socket]
                if writesOutput { arguments += ["--output-file", output] }
                if let peer { arguments += ["--peer", "127.0.0.1:\(peer)"] }
                process = try ChildProcess("setsid", [ChildProcess.intercomPath] + arguments + extra, environment: environment)
            }

            /// The daemon's status, or nil while it does not answer.
            func status() -> StatusReport? {
                let reply = spawnAndWait([ChildProcess.intercomPath, "status", "--json", "--socket", socket])
                guard reply.status == 0 else { return nil }
                return try? StatusReport(json: Data(reply.output.utf8))
            }

            /// Waits until the condition holds: not a timing check (starting daemons on a busy
            /// machine takes seconds), so the bound is generous.
            func waitForStatus(seconds: Double = 20, until condition: (StatusReport) -> Bool) -> StatusReport? {
                let deadline = Date().addingTimeInterval(seconds)
                while Date() < deadline {
                    if let status = status(), condition(status) { return status }
                    usleep(50_000)
                }
                return status()
            }

            var pid: Int32? { status()?.pid }

            deinit {
                if let pid { kill(pid, SIGKILL) }
                _ = process.wait(seconds: 5)
            }
        }

        @Test func aDaemonJoinsTheCallAndAnswersStatus() throws {
            let speech = try SpeechFixture.wavFile(SpeechFixture.sentence)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let b = try RunningDaemon(port: portB, peer: portA)
            let a = try RunningDaemon(port: portA, peer: portB, extra: ["--input-file", speech.path, "--mode", "open"])
            let heard = b.waitForStatus { $0.call.received > 100 }
            #expect(heard.map(\.call.received) ?? 0 > 100, "B heard nothing from A: \(String(describing: heard))")
            let status = try #require(a.status())
            #expect(status.mode == "open")
            #expect(status.call.peers.contains { $0.address == "127.0.0.1:\(portB)" })
            // The human-readable form too.
            let text = spawnAndWait([ChildProcess.intercomPath, "status", "--socket", a.socket])
            #expect(text.status == 0 && text.output.contains("127.0.0.1:\(portB)"), "\(text.output)")
        }

        /// A Raspberry Pi's SD card wears with every write: a call in progress writes nothing to
        /// storage (`write_bytes` in /proc/PID/io counts what a process dirties, sockets and
        /// pipes aside), neither the daemon that talks nor the one that listens.
        @Test func aCallInProgressWritesNothingToStorage() throws {
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let b = try RunningDaemon(port: portB, peer: portA, writesOutput: false)
            let a = try RunningDaemon(port: portA, peer: portB, extra: ["--input-file", speech.path, "--mode", "open"], writesOutput: false)
            let heard = b.waitForStatus { $0.call.received > 100 }
            #expect(heard.map(\.call.received) ?? 0 > 100, "B heard nothing from A: \(String(describing: heard))")
            let pids = try [a, b].map { try #require($0.pid) }
            func written(_ pid: Int32) -> Int? {
                guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
                return text.split(separator: "\n").first { $0.hasPrefix("write_bytes:") }
                    .flatMap { Int($0.dropFirst("write_bytes:".count).trimmingCharacters(in: .whitespaces)) }
            }
            let before = pids.map(written)
            let received = b.status()?.call.received ?? 0
            usleep(5_000_000)
            let after = pids.map(written)
            #expect((b.status()?.call.received ?? 0) > received + 200, "the call did not go on")
            #expect(before.allSatisfy { $0 != nil } && before == after, "written to storage during the call: \(before) → \(after)")
        }

        @Test func sigtermLeavesCleanlyThePeerDropsItAndTheOutputIsValid() throws {
            let speech = try SpeechFixture.wavFile(SpeechFixture.sentence)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let b = try RunningDaemon(port: portB, peer: nil)
            let a = try RunningDaemon(port: portA, peer: portB, extra: ["--input-file", speech.path, "--mode", "open"])
            _ = b.waitForStatus { $0.call.peers.contains { $0.address == "127.0.0.1:\(portA)" } }
            usleep(1_000_000)  // a second of call, so A's output holds something
            let pid = try #require(a.pid)
            kill(pid, SIGTERM)
            #expect(a.process.wait(seconds: 5) == 0, "\(a.process.standardError)")
            // A's goodbye drops it at once; without it, B would keep A for the 5 s keepalive timeout.
            // Timed to the start of the first status request that no longer lists A (B had
            // dropped A by then): on a busy machine a request itself can take a second.
            let stopped = Date()
            var askedAt = Date()
            var dropped: Date?
            while dropped == nil, Date().timeIntervalSince(stopped) < 10 {
                askedAt = Date()
                if let status = b.status(), !status.call.peers.contains(where: { $0.address == "127.0.0.1:\(portA)" }) { dropped = askedAt }
                usleep(50_000)
            }
            let droppedAfter = dropped.map { $0.timeIntervalSince(stopped) }
            #expect(droppedAfter.map { $0 < 3 } == true, "B dropped A after \(droppedAfter.map { "\($0) s" } ?? "more than 10 s")")
            let written = try CallFixtures.readWAV(a.output)
            #expect(written.sampleRate == 48_000 && written.samples.count > 24_000)
            // The header counts exactly the samples that are there: the file was finished.
            let bytes = try Data(contentsOf: URL(fileURLWithPath: a.output))
            let declared = bytes[40..<44].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            #expect(declared == bytes.count - 44)
        }

        @Test func sighupAppliesAChangedModeWhileTheCallGoesOn() throws {
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            let home = temporaryPath("xdg-hup")
            try FileManager.default.createDirectory(atPath: home + "/intercom", withIntermediateDirectories: true)
            let config = home + "/intercom/config.toml"
            try "[talk]\nmode = \"ptt\"\n".write(toFile: config, atomically: true, encoding: .utf8)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let b = try RunningDaemon(port: portB, peer: nil, extra: ["--mode", "open"])
            let a = try RunningDaemon(port: portA, peer: portB, extra: ["--input-file", speech.path], environment: ["XDG_CONFIG_HOME": home])
            let before = try #require(a.waitForStatus { _ in true })
            #expect(before.mode == "ptt")
            usleep(1_000_000)
            #expect(b.status().map(\.call.received) == 0, "B heard A before the key was held")

            try "[talk]\nmode = \"open\"\n".write(toFile: config, atomically: true, encoding: .utf8)
            kill(try #require(a.pid), SIGHUP)
            let after = a.waitForStatus { $0.mode == "open" && $0.transmitting }
            #expect(after?.mode == "open", "\(String(describing: after))")
            let heard = b.waitForStatus { $0.call.received > 50 }
            #expect(heard.map(\.call.received) ?? 0 > 50)
            // The same call: A's stream did not restart.
            #expect(try #require(a.status()).call.peers.count == 1)
        }

        /// Rooms and a target from the configuration file, changed by SIGHUP during the call: A
        /// talks to the kitchen, which B joins, and then to all.
        @Test func sighupAppliesChangedRoomsAndTargetWhileTheCallGoesOn() throws {
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            let (homeA, homeB) = (temporaryPath("xdg-rooms-a"), temporaryPath("xdg-rooms-b"))
            for home in [homeA, homeB] { try FileManager.default.createDirectory(atPath: home + "/intercom", withIntermediateDirectories: true) }
            let (configA, configB) = (homeA + "/intercom/config.toml", homeB + "/intercom/config.toml")
            try "[call]\nto = \"room:kitchen\"\n".write(toFile: configA, atomically: true, encoding: .utf8)
            try "[call]\nrooms = [\"office\"]\n".write(toFile: configB, atomically: true, encoding: .utf8)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let b = try RunningDaemon(port: portB, peer: nil, extra: ["--mode", "open"], environment: ["XDG_CONFIG_HOME": homeB])
            let a = try RunningDaemon(
                port: portA, peer: portB, extra: ["--input-file", speech.path, "--mode", "open"], environment: ["XDG_CONFIG_HOME": homeA]
            )
            // A knows B's room, and sends it nothing.
            let outside = try #require(a.waitForStatus { $0.call.peers.first?.rooms == ["office"] })
            #expect(outside.call.to == "room:kitchen" && outside.call.toPeers == 0, "\(outside.call.to) \(outside.call.toPeers)")
            usleep(1_000_000)
            #expect(b.status().map(\.call.rtpReceived) == 0, "B heard A's talk to a room it is not in")

            try "[call]\nrooms = [\"office\", \"kitchen\"]\n".write(toFile: configB, atomically: true, encoding: .utf8)
            kill(try #require(b.pid), SIGHUP)
            let heard = b.waitForStatus { $0.call.rtpReceived > 50 && $0.call.peers.first?.to == "to kitchen" }
            #expect(heard != nil, "B did not hear A's talk to the kitchen it joined: \(String(describing: b.status()?.call.peers.first))")
            #expect(a.status()?.call.toPeers == 1)

            try "[call]\nto = \"all\"\n".write(toFile: configA, atomically: true, encoding: .utf8)
            kill(try #require(a.pid), SIGHUP)
            #expect(b.waitForStatus { $0.call.peers.first?.to == "to all" } != nil, "A's new target did not reach B")
            // The same call: A's stream did not restart.
            #expect(try #require(a.status()).call.peers.count == 1)
        }

        @Test func theStatusSocketRefusesOtherUsersAndSurvivesGarbage() throws {
            let a = try RunningDaemon(port: freeUDPPort(), peer: nil)
            _ = try #require(a.waitForStatus { _ in true })
            var info = stat()
            #expect(stat(a.socket, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
            let folder = String(a.socket[..<a.socket.lastIndex(of: "/")!])
            #expect(stat(folder, &info) == 0 && info.st_mode & 0o027 == 0, "others may enter the status socket's folder")
            // Another user may not connect.
            let stranger = spawnAndWait(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ChildProcess.intercomPath, "status", "--socket", a.socket])
            #expect(stranger.status != 0)
            // Garbage, oversize requests and clients that hang up do not disturb it.
            for payload in [[UInt8](repeating: 0xFF, count: 5_000), Array("what\n".utf8), [], Array("status".utf8)] {
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in a.socket.utf8.enumerated() { raw[i] = b } }
                _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
                _ = payload.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
            }
            let status = a.status()
            #expect(status != nil, "the daemon stopped answering after garbage")
        }

        @Test func aKilledDaemonStartedAgainIsBackInTheCallWithinTwoSeconds() throws {
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let b = try RunningDaemon(port: portB, peer: portA, extra: ["--mode", "open"])
            var a: RunningDaemon? = try RunningDaemon(port: portA, peer: portB, extra: ["--input-file", speech.path, "--mode", "open"])
            _ = b.waitForStatus { $0.call.received > 50 }
            kill(try #require(a?.pid), SIGKILL)
            _ = a?.process.wait(seconds: 5)
            a = nil
            let heardBefore = b.status().map(\.call.received) ?? 0
            let again = try RunningDaemon(port: portA, peer: portB, extra: ["--input-file", speech.path, "--mode", "open"])
            // Judged from when the restarted daemon answers (its call is running): a debug build
            // starting on a loaded machine takes a varying time before that, which is not the call's.
            _ = try #require(again.waitForStatus(seconds: 15) { _ in true })
            let restarted = Date()
            let back = b.waitForStatus(seconds: 5) { $0.call.received > heardBefore + 20 }
            let took = Date().timeIntervalSince(restarted)
            #expect(back.map(\.call.received) ?? 0 > heardBefore + 20)
            #expect(took < 2, "back in the call \(took) s after the restarted daemon answered")
            _ = again
        }

        /// The watchdog means it: pings go out only while the capture, playback and network
        /// threads all turn their loops, so a thread stuck (here through the test hook) lets
        /// systemd restart the service.
        @Test(arguments: ["capture", "playback", "network"]) func aStuckThreadStopsTheWatchdogPings(thread: String) throws {
            let systemd = try SystemdNotifyListener(path: temporaryPath("notify.sock"))
            let daemon = try RunningDaemon(
                port: freeUDPPort(), peer: nil, extra: ["--stall-thread-for-testing", "\(thread)@2"],
                environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "400000"]
            )
            // Starting takes seconds on a loaded machine (over ten with both cores busy with builds).
            #expect(systemd.collect(for: 60) { $0.contains { $0.contains("WATCHDOG=1") } }, "no ping while every thread turned")
            let pid = try #require(daemon.pid)
            // From the first check that finds the thread stuck, no more pings. (On a loaded machine
            // another thread may be named beside it, or once before it, when it was merely late.)
            func namesTheStuckThread(_ line: Substring) -> Bool {
                guard let names = line.split(separator: "no watchdog ping: the ").last?.split(separator: " thread ").first else { return false }
                return names.split(separator: ", ").contains { $0 == thread }
            }
            let named = waitUntil(seconds: 10) { daemon.process.standardError.split(separator: "\n").contains(where: namesTheStuckThread) }
            #expect(named != nil, "\(daemon.process.standardError)")
            systemd.collect(for: 0.3) { _ in false }
            let before = systemd.messages.count
            systemd.collect(for: 1.5) { _ in false }
            let later = systemd.messages.dropFirst(before)
            #expect(!later.contains { $0.contains("WATCHDOG=1") }, "pings went on with the \(thread) thread stuck: \(later)")
            // It still leaves when asked.
            kill(pid, SIGTERM)
            let gone = Date().addingTimeInterval(10)
            while kill(pid, 0) == 0, Date() < gone { usleep(50_000) }
            #expect(kill(pid, 0) != 0, "the daemon did not leave on SIGTERM")
        }

        @Test func systemdHearsReadinessWatchdogPingsAndStopping() throws {
            let systemd = try SystemdNotifyListener(path: temporaryPath("notify.sock"))
            let daemon = try RunningDaemon(port: freeUDPPort(), peer: nil, environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "400000"])
            // Starting takes seconds on a loaded machine; the pings then come every 200 ms.
            systemd.collect(for: 20) { $0.filter { $0.contains("WATCHDOG=1") }.count >= 2 }
            #expect(systemd.messages.first?.hasPrefix("READY=1") == true, "\(systemd.messages)")
            #expect(systemd.messages.filter { $0.contains("WATCHDOG=1") }.count >= 2, "\(systemd.messages)")
            kill(try #require(daemon.pid), SIGTERM)
            _ = daemon.process.wait(seconds: 5)
            #expect(systemd.collect(for: 2) { $0.contains { $0.contains("STOPPING=1") } })
        }
    }
}
