import Foundation
import IntercomCall
import IntercomCore
import Testing
import TestSupport

extension NetworkEndToEndTests {
    /// Forged mDNS in the LAN lab, with real avahi-daemons: a third host, a stranger, sends
    /// goodbyes for one peer's service (to the LAN's multicast group and to the other peer
    /// alone), then records that move the service to a port of its choosing, while the two
    /// peers are in a call. The call hears no gap longer than half a second. Before mDNS lost
    /// the power to end or move a session, a goodbye cost 2.9 s of silence and a move the call.
    @Suite(.enabled(if: LANLab.isAvailable, "the LAN lab needs root and the tools scripts/setup installs"))
    struct ForgedDiscoveryLANTests {
        static let forger = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/lab/lan/mdns-forge").path

        @Test func forgedGoodbyesAndMovesLeaveARunningCallWithoutAGap() throws {
            // Alice speaks long enough to outlast the attack (up to 14 s of goodbyes, 2 s more, 3 s of moves).
            let lab = try LANLab(hosts: 3, withoutAvahi: [3])
            defer { lab.shutDown() }
            let (a, b) = try SecureCallTests.Device.pairedBothWays("lab-alice", "lab-bob", bAtA: "bob", aAtB: "alice")
            let text = SpeechFixture.paragraph + " " + SpeechFixture.paragraph
            let speech = try SpeechFixture.wavFile(text).path
            let input = try SpeechFixture.speech(text)
            let seconds = CallFixtures.speakerSeconds(input)
            let (statsA, statsB) = (temporaryPath("lab-alice.json"), temporaryPath("lab-bob.json"))
            // Each bound to its IPv4 address, so announced over IPv4 only: a goodbye over IPv4
            // is then all it takes for alice's discovery to let bob go.
            let bob = try DiscoveryCallTests.HostDaemon(lab, host: 2, name: "bob", speech: speech,
                                                        extra: b.arguments + ["--stats-json", statsB, "--mode", "ptt", "--bind", lab.ipv4Address(2)])
            // Alice speaks as a call of its own (as the two-peer calls' speaker does), to her end.
            let alice = try lab.intercom(1, a.arguments + [
                "--port", "5004", "--name", "alice", "--bind", lab.ipv4Address(1), "--input-file", speech,
                "--duration", "\(seconds)", "--stats-json", statsA, "--verbose",
            ])
            defer {
                alice.signal(SIGTERM)
                bob.process.signal(SIGTERM)
            }
            let aliceAddress = "\(lab.ipv4Address(1)):5004"
            let found = waitUntil(seconds: 15) { bob.heard(aliceAddress) }
            let heardAfter = try #require(found, "bob never heard alice: \(bob.peers())\n\(alice.standardError)")
            // And alice's discovery has bob's service (bob may have called her first): a goodbye
            // for a service alice's avahi never had would change nothing.
            let aliceFoundBob = waitUntil(seconds: 15) {
                alice.standardError.split(separator: "\n").contains { $0.contains("peer found") && $0.contains("name=bob") }
            }
            try #require(aliceFoundBob != nil, "alice's discovery never found bob: \(alice.standardError)")

            // The stranger on h3: goodbyes for bob's service, to the group and to alice alone,
            // then records moving bob to h2's discard port, each for about three seconds.
            let own = lab.ipv4Address(3)
            // First to alice alone: bob's avahi does not see these, and so does not answer them
            // by announcing its service again, as it does a goodbye it sees on the group.
            // A goodbye is taken a second after it came, unless bob's avahi refreshes the record
            // meanwhile (announcing, or answering alice's queries): one every 1.5 s, until one is.
            let goodbyes = try lab.run(3, "python3", [Self.forger, "goodbye", "bob", "--from", own,
                                                     "--to", lab.ipv4Address(1), "--count", "8", "--interval", "1.5"])
            // Alice's avahi took the goodbye: discovery told the call that bob left.
            let left = waitUntil(seconds: 14) { alice.standardError.contains("peer left") }
            #expect(left != nil, "the forged goodbye never reached alice's discovery: \(alice.standardError)")
            goodbyes.signal(SIGTERM)
            _ = goodbyes.wait(seconds: 10)
            let multicast = try lab.run(3, "python3", [Self.forger, "goodbye", "bob", "--from", own,
                                                      "--to", "224.0.0.251", "--count", "4"])
            #expect(multicast.wait(seconds: 20) == 0, "\(multicast.standardError)")
            let moves = try lab.run(3, "python3", [Self.forger, "move", "bob", "h2", "9", "--from", own,
                                                  "--to", "224.0.0.251", lab.ipv4Address(1), "--count", "6"])
            #expect(moves.wait(seconds: 20) == 0, "\(moves.standardError)")
            #expect(bob.heard(aliceAddress), "bob: \(bob.peers())")

            // Alice speaks to her end (her --duration), then bob is stopped.
            #expect(alice.wait(seconds: seconds + 30) == 0, "\(alice.standardError)")
            bob.process.signal(SIGTERM)
            #expect(bob.process.wait(seconds: 10) == 0, "\(bob.process.standardError)")
            // Measured from when bob was first seen hearing alice (the audio before the session,
            // while discovery and the handshake ran, was never sent): the attack came after.
            let from = Int((heardAfter + 0.3) * 48_000)
            var speaker = try CallFixtures.readStats(statsA)
            speaker.inputStartNs += UInt64(from) * 1_000_000_000 / 48_000
            let run = CallFixtures.TwoPeerRun(
                input: Array(input[from...]), heard: try CallFixtures.readWAV(bob.output).samples,
                speaker: speaker, listener: try CallFixtures.readStats(statsB))
            let alignment = CallFixtures.align(input: run.input, output: run.heard, senderStats: run.speaker, receiverStats: run.listener)
            #expect(alignment.correlation > 0.8, "bob heard alice: \(alignment.correlation), \(run.listener.received) packets, \(run.listener.lost) lost")
            // No spoken stretch longer than half a second came out silent.
            let gap = CallFixtures.longestGap(input: run.input, output: run.heard, alignment: alignment)
            print("forged mDNS in the LAN lab: longest gap \(gap.seconds) s (\(gap.silentBlocks) silent spoken blocks), correlation \(alignment.correlation)")
            #expect(gap.seconds < 0.5, "a gap of \(gap.seconds) s at \(gap.at) s of alice's speech after bob first heard her")
            print("handshakes: alice \(run.speaker.security.handshakes), bob \(run.listener.security.handshakes)")
        }
    }
}

