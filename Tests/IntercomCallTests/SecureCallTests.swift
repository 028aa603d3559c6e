import Foundation
import IntercomCore
import IntercomIO
import IntercomSecurity
import Synchronization
import Testing
import TestSupport

extension NetworkEndToEndTests {
    /// Encrypted calls between real processes, and a stranger on the LAN who records, replays,
    /// tampers, spoofs and floods.
    @Suite struct SecureCallTests {
        /// A device of its own: a state directory with its identity.
        struct Device {
            let directory: StateDirectory
            let identity: DeviceIdentity

            init(_ name: String) throws {
                directory = StateDirectory(path: temporaryPath("state-\(name)"))
                identity = try DeviceIdentity.loadOrCreate(in: directory)
            }

            var arguments: [String] { ["--state-dir", directory.path] }
            var trusted: TrustedDeviceStore { TrustedDeviceStore(directory: directory) }

            func trust(_ other: Device, as name: String) throws {
                try trusted.add(TrustedDevice(name: name, publicKey: other.identity.publicKey, pairedAt: Date()))
            }

            /// Two devices (state directories named `aName` and `bName`), each trusting the
            /// other: A stores B as `bAtA`, B stores A as `aAtB`.
            static func pairedBothWays(
                _ aName: String = "a", _ bName: String = "b", bAtA: String = "b", aAtB: String = "a"
            ) throws -> (a: Device, b: Device) {
                let (a, b) = (try Device(aName), try Device(bName))
                try a.trust(b, as: bAtA)
                try b.trust(a, as: aAtB)
                return (a, b)
            }
        }

        static func loudest(_ samples: [Float]) -> Double {
            SignalMeasures.blockRMS(samples, block: 4_800).max() ?? 0
        }

        @Test func devicesHearEachOtherOnlyOncePairedBothWays() throws {
            let (a, b) = (try Device("a"), try Device("b"))
            let strangers = try CallFixtures.twoPeerCall(speaker: a.arguments, listener: b.arguments)
            #expect(Self.loudest(strangers.heard) < 0.001, "B played audio from a device it never paired with")
            #expect(strangers.listener.received == 0)
            #expect(strangers.speaker.security.untrustedHandshakes >= 1)
            #expect(strangers.listener.security.handshakes == 0)

            // Trusted one way only: still nothing.
            try b.trust(a, as: "a")
            let oneWay = try CallFixtures.twoPeerCall(speaker: a.arguments, listener: b.arguments)
            #expect(Self.loudest(oneWay.heard) < 0.001)
            #expect(oneWay.speaker.security.untrustedHandshakes >= 1)

            try a.trust(b, as: "b")
            let paired = try CallFixtures.twoPeerCall(speaker: a.arguments, listener: b.arguments + ["--name", "not b\u{1B}[2J"])
            #expect(CallFixtures.correlation(paired) > 0.8)
            let sent = paired.speaker.sentPackets
            let unsent = paired.speaker.security.unsentNoSession
            #expect(paired.listener.received >= sent - unsent - 2, "sent \(sent), \(unsent) before the session")
            #expect(unsent < 200, "the session came up within two seconds of the call's start")
            #expect(paired.listener.security.encrypted)
            // The caller names its peer by the key's fingerprint (the listener's session ended with the
            // caller's goodbye before it wrote its figures).
            let peerPrints = paired.speaker.peers.compactMap(\.fingerprint)
            #expect(peerPrints == [Fingerprint(publicKey: b.identity.publicKey).description], "\(peerPrints)")
            // And shows it by the name A stored it under at pairing, not by the name its hello says.
            #expect(paired.speaker.peers.map(\.name) == ["b"], "\(paired.speaker.peers.map(\.name))")
        }

        @Test func aCapturedCallRevealsNothingAndItsReplaysTamperingAndSpoofsAreDropped() throws {
            let listenerPort = freeUDPPort()
            let forwarder = RecordingForwarder(toB: listenerPort)
            defer { forwarder.stop() }
            let spoofer = LoopbackUDP()
            var injected = (replays: 0, tampered: 0, spoofed: 0)
            let run = try CallFixtures.twoPeerCall(speaker: [], listener: [], text: SpeechFixture.sentence, listenerPort: listenerPort,
                                    speakerTarget: forwarder.port) { _ in
                #expect(forwarder.waitForSealedPacketsTowardB(150), "the call did not start")
                // Halfway through: send B copies of audio it already had, altered ones, and copies from elsewhere.
                let audio = forwarder.datagrams.filter { $0.towardB && $0.bytes.first == 4 }.prefix(60).map(\.bytes)
                for packet in audio {
                    forwarder.toward.send(packet, to: listenerPort)
                    // A changed payload keeps a counter B has seen: refused as a replay before its tag is
                    // even checked. A changed counter is new to B: refused by the tag.
                    var payload = packet
                    payload[payload.count - 20] ^= 0x10
                    forwarder.toward.send(payload, to: listenerPort)
                    var counter = packet
                    counter[8] ^= 0x01
                    forwarder.toward.send(counter, to: listenerPort)
                    spoofer.send(packet, to: listenerPort)
                    usleep(2_000)
                }
                injected = (audio.count, audio.count, audio.count)
            }
            #expect(injected.replays == 60)
            #expect(run.listener.security.replayPackets >= injected.replays * 2 + injected.spoofed)
            #expect(run.listener.security.authFailPackets >= injected.tampered)
            #expect(run.listener.security.roams == 0, "a replay from another address moved the session")
            #expect(CallFixtures.correlation(run) > 0.8, "the call went on")

            // What went over the wire: handshake messages and sealed packets, nothing readable.
            let captured = forwarder.datagrams
            #expect(captured.count > 200)
            #expect(captured.allSatisfy { (1...5).contains($0.bytes.first ?? 0) }, "a datagram was sent in the clear")
            let name = Array("ana-secret-name".utf8)
            #expect(!captured.contains { datagram in
                datagram.bytes.count >= name.count && (0...(datagram.bytes.count - name.count)).contains { Array(datagram.bytes[$0..<($0 + name.count)]) == name }
            }, "the display name is readable on the wire")

            // The next call has new keys: the recording replayed into it opens nothing.
            let output = temporaryPath("replayed-out.wav")
            let stats = temporaryPath("replayed.json")
            let nextPort = freeUDPPort()
            let listener = try ChildProcess.intercom([
                "--port", "\(nextPort)", "--no-discovery", "--output-file", output, "--duration", "60", "--stats-json", stats,
            ])
            try #require(waitForUDPListener(port: nextPort))
            let replayer = LoopbackUDP()
            for datagram in captured where datagram.towardB {
                replayer.send(datagram.bytes, to: nextPort)
                usleep(500)
            }
            usleep(500_000)
            listener.signal(SIGTERM)
            CallFixtures.expectClean([("listener", listener)], within: 10)
            let replayed = try CallFixtures.readStats(stats)
            #expect(replayed.received == 0)
            #expect(Self.loudest(try CallFixtures.readWAV(output).samples) < 0.001)
            let security = replayed.security
            #expect(security.handshakes == 0)
            #expect(security.authFailPackets >= captured.filter { $0.towardB && $0.bytes.first == 4 }.count - 5)
        }

        @Test func aStrangerDrawsNoMoreBytesThanItSendsAndAFloodLeavesTheCallAlone() throws {
            let listenerPort = freeUDPPort()
            let stranger = LoopbackUDP()
            var sentBytes = 0
            var receivedBytes = 0
            var answers = 0
            var cookieReplies = 0
            var floodSent = 0
            var floodSeconds = 0.0
            let run = try CallFixtures.twoPeerCall(speaker: [], listener: [], text: SpeechFixture.sentence, listenerPort: listenerPort) { _ in
                usleep(800_000)
                // What drew a stream from an open intercom: a 4-byte RTCP packet, a plain RTP stream, a hello.
                let probes: [[UInt8]] = [[0x80, 0xC9, 0x00, 0x00]]
                    + (0..<50).map { RTPPacket(payloadType: 96, sequenceNumber: UInt16($0), timestamp: UInt32($0) * 480, ssrc: 7, payload: [0xFC, 1, 2]).serialized() }
                for probe in probes {
                    stranger.send(probe, to: listenerPort)
                    sentBytes += probe.count
                }
                while let reply = stranger.receive(timeout: 1.0) { receivedBytes += reply.bytes.count }
                #expect(receivedBytes == 0, "plain packets drew an answer")

                // A flood of handshake initiations (10,000 a second for one second), each a valid frame.
                var noise = SeededNoise(seed: 5)
                let start = Date()
                while Date().timeIntervalSince(start) < 1.0 {
                    for _ in 0..<100 {
                        let initiation = [1, SecureDatagram.version, 0, 0] + (0..<124).map { _ in UInt8(truncatingIfNeeded: noise.next()) }
                        stranger.send(initiation, to: listenerPort)
                        sentBytes += initiation.count
                        floodSent += 1
                    }
                    usleep(10_000)
                }
                while let reply = stranger.receive(timeout: 0.5) {
                    receivedBytes += reply.bytes.count
                    // Over the budget, a cookie reply (no Diffie–Hellman) rather than a response.
                    if reply.bytes.first == 6, reply.bytes.count == SecureDatagram.cookieReplyLength { cookieReplies += 1 } else { answers += 1 }
                }
                floodSeconds = Date().timeIntervalSince(start)
            }
            #expect(floodSent > 2_000)
            // Cookie replies are 40 bytes to each 128; responses, within the budget, 108.
            #expect(receivedBytes * 3 <= sentBytes, "answered \(receivedBytes) bytes to \(sentBytes)")
            // (The stranger's socket, read only after the flood, holds a few hundred of them.)
            #expect(cookieReplies > 0 && cookieReplies <= run.listener.security.cookieReplies, "\(cookieReplies) cookie replies received")
            // The budget: a burst, then a steady rate, over however long the flood took to be read.
            let limits = SecurityLimits()
            let budget = Int(limits.handshakeBurst + limits.handshakesPerSecond * floodSeconds) + 2
            #expect(answers <= budget, "\(answers) handshakes answered in \(floodSeconds) s")
            // Each refused one is counted (the kernel may drop some before they are read, on a busy machine).
            #expect(run.listener.security.rateLimited >= min(1_000, floodSent / 2))
            #expect(CallFixtures.correlation(run) > 0.8, "the call in progress kept its quality")
            let received = run.listener.received
            #expect(run.listener.lost <= max(2, received / 100), "of \(received)")
        }

        @Test func aPeerThatChangesNetworksIsFollowedByItsAuthenticatedPackets() throws {
            let (run, _) = try CallFixtures.twoPeerCallThroughForwarder(speaker: [], listener: [], underWayAfter: 100) { forwarder in
                forwarder.roam()
            }
            #expect(run.listener.security.roams == 1)
            #expect(run.listener.security.handshakes == 1, "no new handshake was needed")
            #expect(CallFixtures.correlation(run) > 0.8)
            let received = run.listener.received
            #expect(run.listener.lost <= max(2, received / 100), "of \(received)")
        }

        @Test func anUnpairedDeviceIsCutOffWithinTwoSeconds() throws {
            let (a, b) = try Device.pairedBothWays()
            var unpairedAt = 0.0
            // A second and a half of the call first.
            let (run, _) = try CallFixtures.twoPeerCallThroughForwarder(
                speaker: a.arguments, listener: b.arguments, text: SpeechFixture.paragraph, underWayAfter: 150
            ) { _ in
                _ = try? b.trusted.remove(matching: Fingerprint(publicKey: a.identity.publicKey).description)
                unpairedAt = Date().timeIntervalSince1970
            }
            let outputStart = Double(run.listener.outputStartNs) / 1e9
            let cut = Int((unpairedAt - outputStart) * 48_000)
            #expect(cut > 48_000 && cut < run.heard.count, "unpaired \(unpairedAt - outputStart) s into the output")
            let before = Array(run.heard[0..<max(0, cut)])
            let after = Array(run.heard[min(run.heard.count, cut + 2 * 48_000)...])
            #expect(Self.loudest(before) > 0.02, "the paired device was heard first")
            #expect(after.count > 48_000 && Self.loudest(after) < 0.001, "still heard 2 s after unpairing")
        }

        @Test func keysAreRenewedDuringACallWithoutAGap() throws {
            let run = try CallFixtures.twoPeerCall(speaker: ["--rekey-seconds", "1"], listener: ["--rekey-seconds", "1"])
            let rekeys = run.speaker.security.rekeys + run.listener.security.rekeys
            #expect(rekeys >= 4, "\(rekeys) rekeys in a call of \(run.input.count / 48_000) s")
            let alignment = CallFixtures.align(input: run.input, output: run.heard, senderStats: run.speaker, receiverStats: run.listener)
            let gaps = CallFixtures.silentBlocks(input: run.input, output: run.heard, alignment: alignment)
            #expect(gaps.spoken > 100 && gaps.gaps == 0, "\(gaps.gaps) of \(gaps.spoken) spoken blocks came out silent, at \(gaps.at) s of the input")
            #expect(run.listener.lost == 0)
        }

        /// A man in the middle reads each handshake response on its way to A and, before passing
        /// it on, sends B a junk message 3 with the receiver index it just read (from the address
        /// B hears A at), so that junk reaches B before every real message 3, at the call's set-up
        /// and at each renewal (every second): the call is heard as if nothing happened.
        @Test func junkMessageThreeBeforeEveryRealOneLeavesTheCallAlone() throws {
            let listenerPort = freeUDPPort()
            let injected = Mutex(0)
            let forwarder = RecordingForwarder(toB: listenerPort) { datagram, sendToB in
                guard datagram.first == 2, datagram.count == SecureDatagram.responseLength else { return }
                // The response's sender index is the index B's message 3 must name.
                let junk = [3, SecureDatagram.version, 0, 0] + datagram[4..<8] + (0..<(SecureDatagram.finishLength - 8)).map { _ in UInt8.random(in: 0...255) }
                sendToB(junk)
                injected.withLock { $0 += 1 }
            }
            defer { forwarder.stop() }
            let run = try CallFixtures.twoPeerCall(
                speaker: ["--rekey-seconds", "1"], listener: ["--rekey-seconds", "1"], listenerPort: listenerPort, speakerTarget: forwarder.port)
            let count = injected.withLock { $0 }
            #expect(count >= 4 && run.listener.security.badHandshakes >= count, "\(count) injected, \(run.listener.security.badHandshakes) refused")
            #expect(run.speaker.security.unsentNoSession < 300, "\(run.speaker.security.unsentNoSession) packets before the session")
            let alignment = CallFixtures.align(input: run.input, output: run.heard, senderStats: run.speaker, receiverStats: run.listener)
            // Junk taken for a message 3 would leave B on keys A does not have until the next
            // renewal, a second later: from the first word heard on, no gap of half a second
            // (issue 32's bar, as for the spoofed initiations). A busy machine alone made a
            // 40 ms one in a fresh-clone run at load 9.
            let gap = CallFixtures.longestGap(input: run.input, output: run.heard, alignment: alignment)
            print("junk message 3 before every real one: longest gap \(gap.seconds) s at \(gap.at) s (\(gap.silentBlocks) silent spoken blocks)")
            #expect(alignment.correlation > 0.8 && gap.seconds < 0.5, "B heard A: longest gap \(gap.seconds) s at \(gap.at) s")
        }

        @Test func threeDevicesThatPairedPairwiseAllHearTheTalker() throws {
            let devices = try ["a", "b", "c"].map(Device.init)
            for device in devices {
                for other in devices where other.directory != device.directory { try device.trust(other, as: "peer") }
            }
            let speechFile = try SpeechFixture.wavFile(SpeechFixture.sentence)
            let input = try SpeechFixture.speech(SpeechFixture.sentence)
            let seconds = Double(input.count) / 48_000 + 1.5
            let ports = (0..<3).map { _ in freeUDPPort() }
            let outputs = (0..<3).map { temporaryPath("three-\($0).wav") }
            let stats = (0..<3).map { temporaryPath("three-\($0).json") }
            // The listeners run until the talker is done, then are stopped (SIGTERM leaves cleanly).
            let listeners = try [1, 2].map { index in
                ("listener \(index)", try ChildProcess.intercom(devices[index].arguments + [
                    "--port", "\(ports[index])", "--no-discovery", "--output-file", outputs[index],
                    "--duration", "\(seconds + 60)", "--stats-json", stats[index],
                    "--peer", "127.0.0.1:\(ports[3 - index])",
                ]))
            }
            // Speech sent before a listener has its socket is lost, and on a loaded machine a
            // process takes seconds to get there.
            for index in [1, 2] { try #require(waitForUDPListener(port: ports[index]), "listener \(index) did not start") }
            let talker = try ChildProcess.intercom(devices[0].arguments + [
                "--port", "\(ports[0])", "--no-discovery", "--peer", "127.0.0.1:\(ports[1])", "--peer", "127.0.0.1:\(ports[2])",
                "--input-file", speechFile.path, "--duration", "\(seconds)", "--stats-json", stats[0],
            ])
            CallFixtures.expectClean([("talker", talker)], within: seconds + 20)
            usleep(500_000)
            for (_, listener) in listeners { listener.signal(SIGTERM) }
            CallFixtures.expectClean(listeners, within: 10)
            let talking = try CallFixtures.readStats(stats[0])
            let sessions = talking.peers.compactMap(\.fingerprint)
            #expect(Set(sessions) == Set([1, 2].map { Fingerprint(publicKey: devices[$0].identity.publicKey).description }), "\(sessions)")
            for index in [1, 2] {
                let listener = try CallFixtures.readStats(stats[index])
                let heard = try CallFixtures.readWAV(outputs[index]).samples
                let alignment = CallFixtures.align(input: input, output: heard, senderStats: talking, receiverStats: listener)
                #expect(alignment.correlation > 0.8, "listener \(index): \(alignment.correlation)")
                // The two listeners called each other too (the talker had left before they wrote this).
                let peers = listener.peers.compactMap(\.fingerprint)
                #expect(peers == [Fingerprint(publicKey: devices[3 - index].identity.publicKey).description], "listener \(index): \(peers)")
            }
        }
    }
}
