import Foundation
import IntercomCore
import Testing
import TestSupport

extension EndToEndTests {
    /// `intercom` in a real terminal emulator (tmux), driven by keys, read from the screen.
    @Suite struct TerminalTests {
        /// A tmux server of the test's own (its own socket), stopped by its PID.
        final class Tmux {
            let socket = temporaryPath("tmux.sock")

            func run(_ arguments: [String]) throws -> String {
                spawnAndWait(["tmux", "-S", socket] + arguments).output
            }

            func screen(_ target: String) throws -> String { try run(["capture-pane", "-p", "-t", target]) }

            /// The screen once `condition` holds, or as it is after `seconds` (a loaded machine
            /// may take a while to start a peer or redraw).
            func screen(_ target: String, within seconds: Double, until condition: (String) -> Bool) throws -> String {
                let deadline = Date().addingTimeInterval(seconds)
                var shown = try screen(target)
                while !condition(shown), Date() < deadline {
                    usleep(100_000)
                    shown = try screen(target)
                }
                return shown
            }

            deinit {
                if let pid = try? run(["display-message", "-p", "#{pid}"]).trimmingCharacters(in: .whitespacesAndNewlines),
                   let value = Int32(pid) {
                    kill(value, SIGTERM)
                }
                try? FileManager.default.removeItem(atPath: socket)
            }
        }

        @Test func holdingTheTalkKeySendsAndLettingGoStops() throws {
            let speechFile = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let output = temporaryPath("ptt-out.wav")
            let stats = temporaryPath("ptt-b.json")
            let listener = try ChildProcess.intercom([
                "--port", "\(portB)", "--no-discovery", "--output-file", output, "--duration", "60", "--stats-json", stats,
                "--name", "bo@desk",
            ])
            let tmux = Tmux()
            let command = "XDG_STATE_HOME=\(ChildProcess.sharedStateHome) \(ChildProcess.intercomPath) --no-discovery --port \(portA) --peer 127.0.0.1:\(portB) --input-file \(speechFile.path) --mode ptt --name ana@laptop --duration 20; echo EXITED $?; sleep 30"
            _ = try tmux.run(["new-session", "-d", "-s", "ptt", "-x", "80", "-y", "20", command])
            let idle = try tmux.screen("ptt", within: 20) { $0.contains("bo@desk") && $0.contains(" rx ") }
            #expect(idle.contains("ana@laptop") && idle.contains("mode ptt"), "\(idle)")
            #expect(idle.contains("bo@desk"), "the peer is not on the screen:\n\(idle)")
            #expect(idle.contains(" rx "), "\(idle)")

            // Hold space for two seconds, as a terminal reports it: a press, then repeats. Each key
            // is a tmux command, which a loaded machine may run late: how long the keys kept the
            // talk key held is worked out from when they went (the first repeat may come 650 ms
            // after the press, the next ones 150 ms apart).
            let held = Date()
            _ = try tmux.run(["send-keys", "-t", "ptt", " "])
            var lastKey = Date()
            var keptHeld = 0.0
            usleep(400_000)
            var transmitting = try tmux.screen("ptt")
            while Date().timeIntervalSince(held) < 2 {
                _ = try tmux.run(["send-keys", "-t", "ptt", " "])
                keptHeld += min(Date().timeIntervalSince(lastKey), keptHeld == 0 ? 0.65 : 0.15)
                lastKey = Date()
                usleep(30_000)
                if Date().timeIntervalSince(held) > 1 && !transmitting.contains(" TX ") { transmitting = try tmux.screen("ptt") }
            }
            let released = Date()
            #expect(transmitting.contains(" TX "), "no TX while the key was held:\n\(transmitting)")
            let after = try tmux.screen("ptt", within: 3) { $0.contains(" rx ") }
            #expect(after.contains(" rx "), "still transmitting after the key was let go:\n\(after)")

            _ = try tmux.run(["send-keys", "-t", "ptt", "q"])
            let closed = try tmux.screen("ptt", within: 10) { $0.contains("EXITED") }
            #expect(closed.contains("EXITED 0"), "\(closed)")
            #expect(!closed.contains("mode ptt"), "the status screen is still shown after quitting:\n\(closed)")
            listener.signal(SIGTERM)
            #expect(listener.wait(seconds: 10) == 0, "\(listener.standardError)")

            // What B heard: speech while the key was held (plus at most the hold timeout), silence otherwise.
            let heard = try CallFixtures.readWAV(output).samples
            let receiver = try CallFixtures.readStats(stats)
            let outputStart = Double(receiver.outputStartNs) / 1e9
            let heldFrom = held.timeIntervalSince1970 - outputStart
            let heldUntil = released.timeIntervalSince1970 - outputStart
            let blocks = SignalMeasures.blockRMS(heard, block: 4_800)  // 100 ms
            let loud = blocks.indices.filter { blocks[$0] > 0.005 }.map { Double($0) / 10 }
            #expect(!loud.isEmpty)
            #expect(loud.allSatisfy { $0 >= heldFrom - 0.2 && $0 <= heldUntil + 1.0 }, "sound outside the hold \(heldFrom)…\(heldUntil): \(loud)")
            #expect(Double(loud.count) / 10 > min(1.0, keptHeld / 2), "only \(loud.count) loud blocks while the keys held it for \(keptHeld) s")
        }

        /// The number keys pick whom to talk to from a list of everyone, the rooms and the peers,
        /// shown on the screen with the peers' rooms; the pick is shown at once.
        @Test func theNumberKeysPickATarget() throws {
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let listener = try ChildProcess.intercom([
                "--port", "\(portB)", "--no-discovery", "--output-file", temporaryPath("targets-out.wav"), "--duration", "60",
                "--name", "bo@desk", "--room", "kitchen",
            ])
            defer { listener.signal(SIGTERM) }
            let tmux = Tmux()
            let command = "XDG_STATE_HOME=\(ChildProcess.sharedStateHome) \(ChildProcess.intercomPath) --no-discovery --port \(portA) --peer 127.0.0.1:\(portB) --input-file \(try SpeechFixture.wavFile(SpeechFixture.paragraph).path) --mode ptt --name ana@laptop --duration 30; echo EXITED $?; sleep 30"
            _ = try tmux.run(["new-session", "-d", "-s", "targets", "-x", "100", "-y", "20", command])
            let listed = try tmux.screen("targets", within: 20) { $0.contains("3 bo@desk") }
            #expect(listed.contains("bo@desk  [kitchen]"), "\(listed)")
            #expect(listed.contains("all   (1 all  2 room:kitchen  3 bo@desk)"), "\(listed)")
            _ = try tmux.run(["send-keys", "-t", "targets", "2"])
            let room = try tmux.screen("targets", within: 5) { $0.contains("to  room:kitchen   (1 all") }
            #expect(room.contains("to  room:kitchen   (1 all"), "\(room)")
            _ = try tmux.run(["send-keys", "-t", "targets", "3"])
            let whisper = try tmux.screen("targets", within: 5) { $0.contains("to  bo@desk   (1 all") }
            #expect(whisper.contains("to  bo@desk   (1 all"), "\(whisper)")
            _ = try tmux.run(["send-keys", "-t", "targets", "1"])
            #expect(try tmux.screen("targets", within: 5) { $0.contains("to  all   (1 all") }.contains("to  all   (1 all"))
            _ = try tmux.run(["send-keys", "-t", "targets", "q"])
            #expect(try tmux.screen("targets", within: 10) { $0.contains("EXITED") }.contains("EXITED 0"))
        }

        @Test(arguments: ["C-c", "SIGTERM"])
        func interruptingRestoresTheTerminal(how: String) throws {
            let tmux = Tmux()
            let command = "XDG_STATE_HOME=\(ChildProcess.sharedStateHome) \(ChildProcess.intercomPath) --no-discovery --port \(freeUDPPort()) --mode ptt; echo EXITED $?; sleep 30"
            _ = try tmux.run(["new-session", "-d", "-s", "stop", "-x", "80", "-y", "20", command])
            #expect(try tmux.screen("stop", within: 15) { $0.contains("mode ptt") }.contains("mode ptt"))
            if how == "C-c" {
                _ = try tmux.run(["send-keys", "-t", "stop", "C-c"])
            } else {
                let pid = try tmux.run(["display-message", "-p", "-t", "stop", "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)
                // The pane runs a shell whose child is intercom.
                let children = spawnAndWait(["pgrep", "-P", pid]).output.split(separator: "\n").compactMap { Int32($0) }
                #expect(!children.isEmpty)
                for child in children { kill(child, SIGTERM) }
            }
            let screen = try tmux.screen("stop", within: 10) { $0.contains("EXITED") }
            #expect(screen.contains("EXITED 0"), "\(screen)")
            #expect(!screen.contains("mode ptt"), "the status screen is still shown:\n\(screen)")
            let cursor = try tmux.run(["display-message", "-p", "-t", "stop", "#{cursor_flag} #{alternate_on}"])
            #expect(cursor.hasPrefix("1 0"), "cursor shown and alternate screen off, got \(cursor)")
        }
    }
}
