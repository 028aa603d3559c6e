import Foundation
import IntercomCall
import IntercomCore
import Testing
import TestSupport

extension NetworkEndToEndTests {
    /// Calls in the LAN lab (network namespaces, each with its own avahi-daemon), with no
    /// addresses typed: peers find each other by mDNS.
    @Suite(.enabled(if: LANLab.isAvailable, "the LAN lab needs root and the tools scripts/setup installs"))
    struct DiscoveryCallTests {
        /// A daemon in a lab host and its status socket.
        struct HostDaemon {
            let process: ChildProcess
            let socket: String
            let output: String

            init(_ lab: LANLab, host: Int, name: String, speech: String, extra: [String] = []) throws {
                socket = temporaryPath("h\(host).sock")
                output = temporaryPath("h\(host).wav")
                process = try lab.intercom(host, [
                    "daemon", "--port", "5004", "--name", name, "--input-file", speech, "--mode", "open",
                    "--output-file", output, "--status-socket", socket,
                ] + extra)
            }

            /// The daemon's status, or nil while it does not answer.
            func status() -> StatusReport? {
                let reply = spawnAndWait([ChildProcess.intercomPath, "status", "--json", "--socket", socket])
                guard reply.status == 0 else { return nil }
                return try? StatusReport(json: Data(reply.output.utf8))
            }

            func peers() -> [PeerSnapshot] { status()?.call.peers ?? [] }

            func heard(_ address: String) -> Bool {
                peers().contains { $0.address == address && $0.ssrc != nil }
            }
        }

        @Test func twoPeersWithNoAddressesFindEachOtherTalkAndLeave() throws {
            let lab = try LANLab(hosts: 2)
            defer { lab.shutDown() }
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph).path
            let alice = try HostDaemon(lab, host: 1, name: "alice", speech: speech)
            // Bob starts once alice is announced on the LAN, so that the time bob takes to
            // find her is discovery's alone, not alice's start on a busy machine.
            let announced = waitUntil(seconds: 20) {
                guard let browse = try? lab.run(2, "avahi-browse", ["--parsable", "--terminate", "_intercom._udp"]),
                      browse.wait(seconds: 10) == 0 else { return false }
                return browse.standardOutput.contains(";alice;_intercom._udp;")
            }
            try #require(announced != nil, "alice was not announced: \(alice.process.standardError)")
            let bob = try HostDaemon(lab, host: 2, name: "bob", speech: speech)
            let bobAddress = "\(lab.ipv4Address(2)):5004"
            let aliceAddress = "\(lab.ipv4Address(1)):5004"

            let found = waitUntil(seconds: 8) { alice.heard(bobAddress) && bob.heard(aliceAddress) }
            #expect(found != nil, "alice: \(alice.peers()) bob: \(bob.peers())\n\(alice.process.standardError)")
            let status = spawnAndWait([ChildProcess.intercomPath, "status", "--json", "--socket", alice.socket]).output
            #expect(status.contains("\"discovery\":\"running\""), "\(status)")
            // How long discovery took, as each peer logged it from its own start: bob's is the
            // time to find a peer already on the LAN (the goal is under a second); alice's
            // waited for bob to start and announce himself.
            usleep(300_000)
            let times = [alice, bob].compactMap { daemon in
                daemon.process.standardError.split(separator: "\n").first { $0.contains("peer found") }?
                    .split(separator: " ").first { $0.hasPrefix("after_ms=") }.flatMap { Int($0.dropFirst("after_ms=".count)) }
            }
            print("discovery: start to peer found in \(times) ms (alice, bob; goal for bob < 1000 ms)")
            #expect(times.count == 2, "\(alice.process.standardError)\n\(bob.process.standardError)")
            #expect(times.last.map { $0 < 2_000 } ?? false, "bob found alice \(times.last ?? -1) ms after his start")
            #expect(alice.peers().first { $0.address == bobAddress }?.origin == "discovered")

            // SIGTERM: a goodbye (RTCP BYE and mDNS), so alice drops bob within 3 s.
            bob.process.signal(SIGTERM)
            #expect(bob.process.wait(seconds: 5) == 0, "\(bob.process.standardError)")
            let dropped = waitUntil(seconds: 3) { !alice.peers().contains { $0.address == bobAddress } }
            #expect(dropped != nil, "alice still lists bob: \(alice.peers())")

            // SIGKILL: no word at all; bob goes after the keepalive timeout at the latest.
            let again = try HostDaemon(lab, host: 2, name: "bob", speech: speech)
            #expect(waitUntil(seconds: 8) { alice.heard(bobAddress) } != nil)
            again.process.signal(SIGKILL)
            _ = again.process.wait(seconds: 5)
            let forgotten = waitUntil(seconds: 8) { !alice.peers().contains { $0.address == bobAddress } }
            #expect(forgotten != nil, "alice still lists the killed bob: \(alice.peers())")
            alice.process.signal(SIGTERM)
            #expect(alice.process.wait(seconds: 5) == 0)
            // Alice's output holds bob's speech.
            let heard = try CallFixtures.readWAV(alice.output).samples
            #expect(SignalMeasures.rms(heard) > 0.01)
        }

        @Test func withoutAvahiDaemonOneWarningAndStaticPeersStillWork() throws {
            let lab = try LANLab(hosts: 2, withoutAvahi: [1, 2])
            defer { lab.shutDown() }
            let speech = try SpeechFixture.wavFile(SpeechFixture.sentence).path
            let alice = try HostDaemon(lab, host: 1, name: "alice", speech: speech, extra: ["--peer", "\(lab.ipv4Address(2)):5004"])
            let bob = try HostDaemon(lab, host: 2, name: "bob", speech: speech)
            // The six seconds count from when both daemons answer: on a loaded machine a debug
            // build's start took most of them (a fresh-clone run heard each other just after).
            #expect(waitUntil(seconds: 20) { alice.status() != nil && bob.status() != nil } != nil, "the daemons did not answer")
            let talking = waitUntil(seconds: 6) { alice.heard("\(lab.ipv4Address(2)):5004") && bob.heard("\(lab.ipv4Address(1)):5004") }
            #expect(talking != nil, "alice: \(alice.peers()) bob: \(bob.peers())")
            let status = spawnAndWait([ChildProcess.intercomPath, "status", "--socket", alice.socket]).output
            #expect(status.contains("discovery unavailable (no avahi-daemon)"), "\(status)")
            alice.process.signal(SIGTERM)
            bob.process.signal(SIGTERM)
            _ = alice.process.wait(seconds: 5)
            _ = bob.process.wait(seconds: 5)
            let warnings = alice.process.standardError.split(separator: "\n").filter { $0.contains("peers given with --peer still work") }
            #expect(warnings.count == 1, "\(alice.process.standardError)")
        }

        @Test func theCallComesBackByItselfAfterTheNetworkWentDown() throws {
            let lab = try LANLab(hosts: 2)
            defer { lab.shutDown() }
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph).path
            let alice = try HostDaemon(lab, host: 1, name: "alice", speech: speech)
            let bob = try HostDaemon(lab, host: 2, name: "bob", speech: speech, extra: ["--peer", "\(lab.ipv4Address(1)):5004"])
            let aliceAddress = "\(lab.ipv4Address(1)):5004"
            #expect(waitUntil(seconds: 8) { bob.heard(aliceAddress) } != nil)

            func received() -> Int { bob.status()?.call.received ?? 0 }
            // Bob's link goes down for three seconds (its address goes with it), then comes back.
            func link(_ state: String) throws {
                let command = try lab.run(2, "ip", ["link", "set", "lan0", state])
                #expect(command.wait(seconds: 10) == 0)
            }
            try link("down")
            usleep(1_000_000)
            let during = received()
            usleep(2_000_000)
            #expect(received() <= during + 5, "audio still arrived while the link was down")
            try link("up")
            let address = try lab.run(2, "ip", ["addr", "replace", "\(lab.ipv4Address(2))/24", "dev", "lan0"])
            _ = address.wait(seconds: 10)

            let before = received()
            let back = waitUntil(seconds: 10) { received() > before + 50 }
            #expect(back != nil, "bob hears nothing since the network came back: \(bob.peers())")
            alice.process.signal(SIGTERM)
            bob.process.signal(SIGTERM)
            #expect(alice.process.wait(seconds: 5) == 0)
            #expect(bob.process.wait(seconds: 5) == 0, "\(bob.process.standardError)")
        }
    }
}
