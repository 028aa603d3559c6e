import Foundation
import IntercomCore
import Testing
import TestSupport

extension NetworkEndToEndTests {
    @Suite struct CallBadInputTests {
        /// Plain RTP's parsers (`--unencrypted`), and an encrypted call, where nothing unauthenticated
        /// gets past the tag check.
        @Test(arguments: [false, true]) func garbageIsDroppedAndCountedWhileTheCallGoesOn(encrypted: Bool) throws {
            let mode = encrypted ? [] : ["--unencrypted"]
            let portB = freeUDPPort()
            let run = try CallFixtures.twoPeerCall(speaker: mode, listener: mode, listenerPort: portB) { _ in
                usleep(300_000)
                let attacker = LoopbackUDP()
                var noise = SeededNoise(seed: 99)
                let valid = RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 0, ssrc: 0xBAD, payload: [0xFC, 1, 2, 3]).serialized()
                var wrongVersion = valid
                wrongVersion[0] = 0x40
                var wrongPayloadType = valid
                wrongPayloadType[1] = 0
                for round in 0..<400 {
                    // A flood of random bytes from an address nobody invited, and every kind of bad RTP.
                    attacker.send((0..<Int(noise.next() % 300 + 1)).map { _ in UInt8(truncatingIfNeeded: noise.next()) }, to: portB)
                    if round % 4 == 0 {
                        attacker.send(Array(valid.prefix(7)), to: portB)  // truncated header
                        attacker.send(wrongVersion, to: portB)
                        attacker.send(wrongPayloadType, to: portB)
                        attacker.send([UInt8](repeating: 0x80, count: 4000), to: portB)  // too large
                    }
                    usleep(2_000)
                }
            }
            let receiver = run.listener
            // 100 of each kind were sent. On a busy machine the kernel may drop a few before the
            // receiver reads them, when its socket buffer fills (4000-byte datagrams fill it fastest).
            if encrypted {
                // The 400 random datagrams, the 100 truncated, 100 wrong-version and 100 wrong-type ones.
                let security = receiver.security
                #expect(security.authFailPackets >= 630, "\(security)")
                #expect(receiver.dropped.wrongVersion == 0, "nothing unauthenticated is parsed")
            } else {
                #expect(receiver.dropped.malformed > 50)
                #expect(receiver.dropped.wrongVersion >= 90)
                #expect(receiver.dropped.wrongPayloadType >= 90)
            }
            #expect(receiver.dropped.tooLarge >= 90)
            let correlation = CallFixtures.correlation(run)
            #expect(correlation > 0.8, "median correlation \(correlation)")
        }

        @Test func aCallBoundToOneAddressHearsOnlyWhatIsSentToIt() throws {
            let speech = try SpeechFixture.wavFile(SpeechFixture.sentence).path
            var received: [String: Int] = [:]
            for target in ["127.0.0.1", "127.0.0.2"] {
                let port = freeUDPPort()
                let stats = temporaryPath("bound.json")
                let listener = try ChildProcess.intercom([
                    "--bind", "127.0.0.2", "--port", "\(port)", "--no-discovery", "--output-file", temporaryPath("bound.wav"),
                    "--duration", "60", "--stats-json", stats,
                ])
                try #require(waitForUDPListener(port: port), "the listener did not start")
                let speaker = try ChildProcess.intercom([
                    "--no-discovery", "--port", "\(freeUDPPort())", "--peer", "\(target):\(port)", "--input-file", speech, "--duration", "3",
                ])
                CallFixtures.expectClean([("speaker", speaker)], within: 20)
                usleep(500_000)
                listener.signal(SIGTERM)
                CallFixtures.expectClean([("listener", listener)], within: 10)
                received[target] = try CallFixtures.readStats(stats).received
            }
            #expect(received["127.0.0.1"] == 0, "\(received)")
            #expect((received["127.0.0.2"] ?? 0) > 100, "\(received)")
        }

        /// One clear line naming the culprit, and a non-zero exit.
        static func expectCleanFailure(_ arguments: [String], mentioning culprit: String) throws {
            let process = try ChildProcess.intercom(arguments)
            let status = process.wait(seconds: 10)
            #expect(status != nil && status != 0)
            let errorLines = process.standardError.split(separator: "\n").filter { $0.hasPrefix("Error:") }
            #expect(errorLines.count == 1, "\(process.standardError)")
            #expect(errorLines.first?.contains(culprit) == true, "\(process.standardError)")
        }

        @Test func invalidWAVFileIsNamed() throws {
            let junk = temporaryPath("junk.wav")
            try Data("RIFF....WAVEjunk".utf8).write(to: URL(fileURLWithPath: junk))
            try Self.expectCleanFailure(["--no-discovery", "--port", "\(freeUDPPort())", "--input-file", junk, "--duration", "1"], mentioning: junk)
            let missing = temporaryPath("missing.wav")
            try Self.expectCleanFailure(["--no-discovery", "--port", "\(freeUDPPort())", "--input-file", missing, "--duration", "1"], mentioning: missing)
        }

        @Test func badPeerIsNamed() throws {
            try Self.expectCleanFailure(["--no-discovery", "--peer", "nonsense:port", "--duration", "1"], mentioning: "nonsense:port")
            try Self.expectCleanFailure(["--no-discovery", "--peer", "127.0.0.1", "--duration", "1"], mentioning: "127.0.0.1")
        }

        @Test func portInUseIsNamed() throws {
            let port = freeUDPPort()
            let holder = try ChildProcess.intercom(["--no-discovery", "--port", "\(port)", "--duration", "20"])
            try #require(waitForUDPListener(port: port))
            try Self.expectCleanFailure(["--no-discovery", "--port", "\(port)", "--duration", "1"], mentioning: "\(port)")
            holder.signal(SIGTERM)
            #expect(holder.wait(seconds: 5) == 0)
        }
    }
}
