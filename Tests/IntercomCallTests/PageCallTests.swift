import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Testing
import TestSupport

extension EndToEndTests {
    /// `intercom page` between real processes: the page plays over another device, which the
    /// receiver turns down by 15 dB while it sounds and brings back within 300 ms after.
    @Suite struct PageCallTests {
        typealias Device = NetworkEndToEndTests.SecureCallTests.Device

        static func tone(_ frequency: Double, seconds: Double, amplitude: Double = 0.2) -> [Float] {
            (0..<Int(seconds * 48_000)).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / 48_000)) }
        }

        static func wav(_ samples: [Float], _ name: String) throws -> String {
            let path = temporaryPath(name)
            try Data(WAVCodec.encode(.init(sampleRate: 48_000, channels: 1, samples: samples))).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// The amplitude of `frequency` in each 20 ms of `samples`.
        static func levels(of frequency: Double, in samples: [Float]) -> [Double] {
            stride(from: 0, to: samples.count - 960, by: 960).map { start in
                var (c, s) = (0.0, 0.0)
                for n in 0..<960 {
                    let phase = 2 * Double.pi * frequency * Double(start + n) / 48_000
                    c += Double(samples[start + n]) * cos(phase)
                    s += Double(samples[start + n]) * sin(phase)
                }
                return 2 * (c * c + s * s).squareRoot() / 960
            }
        }

        @Test func aPageDucksAnotherTalkerBy15dBAndReleasesWithin300ms() throws {
            let devices = try ["talker", "pager", "listener"].map(Device.init)
            for device in devices {
                for other in devices where other.directory != device.directory { try device.trust(other, as: "peer") }
            }
            let (talkerPort, listenerPort) = (freeUDPPort(), freeUDPPort())
            let output = temporaryPath("paged.wav")
            let listener = try ChildProcess.intercom(devices[2].arguments + [
                "--port", "\(listenerPort)", "--no-discovery", "--output-file", output, "--duration", "60",
            ])
            try #require(waitForUDPListener(port: listenerPort))
            let talker = try ChildProcess.intercom(devices[0].arguments + [
                "--port", "\(talkerPort)", "--no-discovery", "--peer", "127.0.0.1:\(listenerPort)",
                // Long enough for the page (which starts 3 s in, and may take seconds to start on
                // a loaded machine) and the second after it.
                "--input-file", try Self.wav(Self.tone(440, seconds: 16), "talker.wav"), "--duration", "17.5",
            ])
            usleep(3_000_000)
            let page = try ChildProcess.intercom(devices[1].arguments + [
                "page", "--no-discovery", "--peer", "127.0.0.1:\(listenerPort)", "--input-file", try Self.wav(Self.tone(1_000, seconds: 2), "chime.wav"),
            ])
            #expect(page.wait(seconds: 20) == 0, "\(page.standardError)")
            #expect(page.standardOutput.contains("paged 1 device"), "\(page.standardOutput)")
            CallFixtures.expectClean([("talker", talker)], within: 20)
            listener.signal(SIGTERM)
            CallFixtures.expectClean([("listener", listener)], within: 10)

            let heard = try CallFixtures.readWAV(output).samples
            let (talk, chime) = (Self.levels(of: 440, in: heard), Self.levels(of: 1_000, in: heard))
            let sounding = chime.indices.filter { chime[$0] > 0.05 }
            guard let first = sounding.first, let last = sounding.last else {
                Issue.record("the page was not heard: loudest \(chime.max() ?? 0)")
                return
            }
            #expect(Double(last - first) * 0.02 > 1.5, "the page played \(Double(last - first) * 0.02) s of 2")
            func mean(_ range: Range<Int>) -> Double { talk[range.clamped(to: 0..<talk.count)].reduce(0, +) / Double(max(1, range.count)) }
            let before = mean((first - 50)..<(first - 5))
            let during = mean((first + 10)..<(last - 5))
            // 300 ms after the page's last sound, and the second after.
            let after = mean((last + 15)..<(last + 65))
            let ducked = 20 * log10(before / max(during, 1e-9))
            print("page: the other device \(before) before, ducked by \(ducked) dB, \(after) from 300 ms after")
            #expect(before > 0.1, "the other device before the page: \(before)")
            #expect(abs(ducked - 15) <= 2, "ducked by \(ducked) dB")
            #expect(abs(20 * log10(before / max(after, 1e-9))) <= 1, "300 ms after the page: \(after) against \(before)")
        }

        /// `intercom page` where a daemon runs: the daemon sends it at once, from its identity and
        /// in place of its microphone (here silent, its talk key never pressed), to the room
        /// asked for only; then it talks to its own target again. A target nobody is in, and a
        /// recording too long for a daemon's page, are refused with nothing sent.
        @Test func aRunningDaemonSendsThePageItIsHandedToTheTargetOnly() throws {
            let devices = try ["pager", "kitchen", "outsider"].map(Device.init)
            let names = ["pager", "kit", "out"]
            for device in devices {
                for (other, name) in zip(devices, names) where other.directory != device.directory { try device.trust(other, as: name) }
            }
            let ports = (1...2).map { _ in freeUDPPort() }
            let output = temporaryPath("daemon-paged.wav")
            let stats = (1...2).map { temporaryPath("daemon-page-\($0).json") }
            let listeners = try (1...2).map { index -> (String, ChildProcess) in
                var arguments = devices[index].arguments + ["--port", "\(ports[index - 1])", "--no-discovery", "--name", names[index]]
                arguments += ["--duration", "90", "--stats-json", stats[index - 1]]
                arguments += index == 1 ? ["--room", "kitchen", "--output-file", output] : ["--output-file", temporaryPath("daemon-page-outsider.wav")]
                return (names[index], try ChildProcess.intercom(arguments))
            }
            for port in ports { try #require(waitForUDPListener(port: port)) }
            let daemon = try NetworkEndToEndTests.DaemonTests.RunningDaemon(port: freeUDPPort(), peer: ports[0], extra: devices[0].arguments + [
                "--peer", "127.0.0.1:\(ports[1])", "--name", names[0], "--mode", "ptt",
                "--input-file", try Self.wav([Float](repeating: 0, count: 48_000 * 80), "daemon-silence.wav"),
            ])
            let ready = daemon.waitForStatus { status in
                status.call.peers.count == 2 && status.call.peers.allSatisfy { $0.fingerprint != nil }
                    && status.call.peers.contains { $0.rooms == ["kitchen"] }
            }
            try #require(ready != nil, "the daemon's sessions: \(String(describing: daemon.status()?.call.peers))")

            func page(_ arguments: [String]) -> (status: Int32?, output: String) {
                let result = spawnAndWait([ChildProcess.intercomPath, "page", "--socket", daemon.socket] + arguments)
                return (result.status, result.output)
            }
            // Two seconds of chime over sessions already up (the time, printed, includes starting the command).
            let asked = ContinuousClock.now
            let sent = page(["--to", "room:kitchen", "--input-file", try Self.wav(Self.tone(1_000, seconds: 2), "daemon-chime.wav")])
            let took = (ContinuousClock.now - asked).seconds
            #expect(sent.status == 0 && sent.output.contains("paged 1 device (room:kitchen) through the daemon"), "\(sent)")
            #expect(daemon.waitForStatus(seconds: 5) { $0.call.to == "all" } != nil, "the daemon did not talk to its own target again")

            let nobody = page(["--to", "room:attic", "--input-file", try Self.wav(Self.tone(1_000, seconds: 1), "daemon-attic.wav")])
            #expect(nobody.status == 69, "\(nobody)")
            let tooLong = page(["--input-file", try Self.wav([Float](repeating: 0.1, count: 48_000 * 31), "daemon-long.wav")])
            #expect(tooLong.status == 65, "\(tooLong)")
            #expect(daemon.status()?.call.to == "all")

            for (_, listener) in listeners { listener.signal(SIGTERM) }
            CallFixtures.expectClean(listeners, within: 10)
            let chime = Self.levels(of: 1_000, in: try CallFixtures.readWAV(output).samples)
            let sounding = chime.indices.filter { chime[$0] > 0.05 }
            #expect(Double((sounding.last ?? 0) - (sounding.first ?? 0)) * 0.02 > 1.5, "the kitchen heard \(Double(sounding.count) * 0.02) s of the page")
            // The outsider's machine got no RTP at all: the daemon sent it only the page, to the kitchen.
            let outsider = try CallFixtures.readStats(stats[1])
            #expect(outsider.rtpReceived == 0 && outsider.peers.first?.fingerprint != nil, "the outsider received \(outsider.rtpReceived) RTP packets")
            let kitchen = try CallFixtures.readStats(stats[0])
            print("daemon page: '\(sent.output.trimmingCharacters(in: .whitespacesAndNewlines))' after \(took) s; the kitchen heard \(Double(sounding.count) * 0.02) s of it; the outsider \(outsider.rtpReceived) RTP packets; refused: '\(nobody.output)' \(String(describing: nobody.status)), '\(tooLong.output)' \(String(describing: tooLong.status))")
            #expect(kitchen.streams.contains { $0.page && $0.peer == names[0] }, "\(kitchen.streams.map { ($0.peer, $0.page) })")
        }
    }
}
