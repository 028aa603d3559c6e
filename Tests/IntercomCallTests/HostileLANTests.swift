import Foundation
import IntercomCore
import Testing
import TestSupport

extension NetworkEndToEndTests {
    /// A stranger on the LAN against a plain-RTP peer (`--unencrypted`, where nothing
    /// authenticates a datagram, so every table is open to it), as real datagrams to a real
    /// process: whatever it sends costs a fixed amount, and a real call still plays.
    @Suite struct HostileLANTests {
        /// A stranger with sockets of its own (one per address it pretends to be).
        struct Stranger {
            let sockets = (0..<40).map { _ in LoopbackUDP() }
            var noise = SeededNoise(seed: 0x5EED)
            let target: Int

            mutating func ssrc() -> UInt32 { UInt32(truncatingIfNeeded: noise.next()) }

            /// `count` RTP packets of one source whose sequence numbers follow on, so that it passes
            /// probation; the payload is a silent Opus frame unless one is given.
            func stream(_ ssrc: UInt32, from socket: LoopbackUDP, count: Int, payload: [UInt8] = [0xF8, 0xFF, 0xFE]) {
                for index in 0..<count {
                    let packet = RTPPacket(
                        payloadType: 96, sequenceNumber: UInt16(index), timestamp: UInt32(index * 960), ssrc: ssrc, payload: payload
                    )
                    socket.send(packet.serialized(), to: target)
                }
            }

            func rtcp(_ packets: [RTCPPacket], from socket: LoopbackUDP) {
                socket.send(RTCPPacket.serializeCompound(packets), to: target)
            }

            /// Makes itself a peer with a stream, says its name (raw bytes) in SDES, and goes on
            /// sending for a while so that it stays on the peer list.
            func introduce(as name: [UInt8], from socket: LoopbackUDP, seconds: Double = 0.8) {
                let source: UInt32 = 0x4E414D45
                stream(source, from: socket, count: 5)
                socket.send(
                    RTCPPacket.serializeCompound([.receiverReport(RTCPReceiverReport(ssrc: source))]) + HostileLANTests.nameItem(ssrc: source, name: name),
                    to: target
                )
                for index in 5..<(5 + Int(seconds * 50)) {
                    let packet = RTPPacket(payloadType: 96, sequenceNumber: UInt16(index), timestamp: UInt32(index * 960), ssrc: source, payload: [0xF8, 0xFF, 0xFE])
                    socket.send(packet.serialized(), to: target)
                    usleep(20_000)
                }
            }
        }

        /// The resident memory of a process, in MB.
        static func residentMegabytes(_ pid: Int32) -> Double {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Double(line.split(separator: " ").dropFirst().first ?? "") .map { $0 / 1024 } ?? -1
        }

        /// Terminal escapes (clear the screen, set the window title, a C1 CSI), a bidi override and
        /// invalid UTF-8.
        static let hostileName = Array("evil\u{1B}[2J\u{1B}]0;pwned\u{07}\u{9B}31m\u{202E}gnp".utf8) + [0xFF, 0xC3, 0x28] + Array("exe".utf8)

        /// An SDES packet of one chunk with a NAME item of raw bytes (invalid UTF-8 included).
        static func nameItem(ssrc: UInt32, name: [UInt8]) -> [UInt8] {
            var chunk = withUnsafeBytes(of: ssrc.bigEndian, Array.init) + [2, UInt8(name.count)] + name + [0]
            while chunk.count % 4 != 0 { chunk.append(0) }
            let words = UInt16(chunk.count / 4)
            return [0x81, 202, UInt8(words >> 8), UInt8(words & 0xFF)] + chunk
        }

        @Test func strangersFillingEveryTableCostAFixedAmountAndARealCallStillPlays() throws {
            let listenerPort = freeUDPPort()
            let output = temporaryPath("hostile-out.wav")
            let (speakerStats, listenerStats) = (temporaryPath("hostile-a.json"), temporaryPath("hostile-b.json"))
            let listener = try ChildProcess.intercom([
                "--unencrypted", "--port", "\(listenerPort)", "--no-discovery", "--output-file", output, "--duration", "90",
                "--stats-json", listenerStats, "--name", "door",
            ])
            var stranger = Stranger(target: listenerPort)
            // Measured once the call runs (a loaded machine may take seconds to start it).
            try #require(waitForUDPListener(port: listenerPort))
            // Once start-up is over: two readings 300 ms apart within 0.2 MB of each other.
            var before = -1.0
            _ = waitUntil(seconds: 10, every: .milliseconds(300)) {
                let now = Self.residentMegabytes(listener.pid)
                defer { before = now }
                return abs(now - before) < 0.2
            }

            // Lying lengths: a CSRC count, an extension and padding longer than the packet; RTCP
            // lengths of 0 and 0xFFFF, SDES without its terminator, a BYE reason past the end; and
            // the largest UDP datagram there is.
            let ssrcBytes: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF]
            let lies: [[UInt8]] = [
                [0x8F, 96, 0, 1, 0, 0, 0, 0] + ssrcBytes,
                [0x90, 96, 0, 1, 0, 0, 0, 0] + ssrcBytes + [0xBE, 0xDE, 0xFF, 0xFF, 1, 2, 3, 4],
                [0xA0, 96, 0, 1, 0, 0, 0, 0] + ssrcBytes + [0xF8, 0xFF],
                [0x80, 201, 0, 0] + ssrcBytes,
                [0x80, 201, 0xFF, 0xFF] + ssrcBytes + [0, 0, 0, 0],
                [0x81, 202, 0, 2] + ssrcBytes + [1, 2, 0x61, 0x62],
                [0x81, 203, 0, 2] + ssrcBytes + [20, 0x61, 0x62, 0x63],
            ]
            let liar = LoopbackUDP()
            for _ in 0..<20 {
                for lie in lies { liar.send(lie, to: listenerPort) }
                liar.send([UInt8](repeating: 0x80, count: 65_507), to: listenerPort)
                usleep(5_000)
            }

            // Opus payloads that are random, or claim 120 ms (six 20 ms frames; 48 of 2.5 ms).
            let opusAttacker = LoopbackUDP()
            for index in 0..<30 {
                var random = (0..<(Int(stranger.noise.next() % 200) + 1)).map { _ in UInt8(truncatingIfNeeded: stranger.noise.next()) }
                random[0] |= 0x03  // frame count code 3, so the count byte is read too
                stranger.stream(0xA77AC4 + UInt32(index), from: opusAttacker, count: 3, payload: random)
                usleep(40_000)  // long enough for each to be played before the next replaces it
            }
            stranger.stream(0x120, from: opusAttacker, count: 5, payload: [0xFB, 0x06] + [UInt8](repeating: 0x55, count: 600))
            stranger.stream(0x121, from: opusAttacker, count: 5, payload: [0x83, 0x30] + [UInt8](repeating: 0xAA, count: 480))

            // Probation: three packets each for 600 made-up sources from 40 addresses; then the
            // same sources in waves that end with a BYE for each, and 20,000 sender reports of
            // random sources.
            func fillTables() {
                for round in 0..<15 {
                    for socket in stranger.sockets {
                        for _ in 0..<(round < 5 ? 3 : 1) { stranger.stream(stranger.ssrc(), from: socket, count: 3) }
                    }
                    for socket in stranger.sockets.prefix(30) {
                        let sources = (0..<3).map { _ in stranger.ssrc() }
                        for source in sources { stranger.stream(source, from: socket, count: 4) }
                        stranger.rtcp([.receiverReport(RTCPReceiverReport(ssrc: sources[0])), .goodbye(RTCPGoodbye(sources: sources))], from: socket)
                    }
                    usleep(20_000)
                }
                for index in 0..<20_000 {
                    let report = RTCPSenderReport(ssrc: stranger.ssrc(), ntpTimestamp: NTPTimestamp(seconds: 1, fraction: 0), rtpTimestamp: 0, packetCount: 1, octetCount: 1)
                    stranger.rtcp([.senderReport(report)], from: stranger.sockets[index % stranger.sockets.count])
                    if index % 200 == 0 { usleep(2_000) }
                }
            }
            fillTables()
            usleep(1_500_000)
            let afterFirstFill = Self.residentMegabytes(listener.pid)
            // As many strangers again, all new: bounded tables make room by letting the first
            // ones go, so the second wave costs next to nothing more.
            fillTables()

            // A name with terminal escapes, from a stranger that made itself a peer with a stream.
            stranger.introduce(as: Self.hostileName, from: stranger.sockets[0])
            usleep(1_500_000)
            let afterAttacks = Self.residentMegabytes(listener.pid)

            // Now a real call, through a forwarder so that a stranger can copy its SSRC.
            let forwarder = RecordingForwarder(toB: listenerPort)
            defer { forwarder.stop() }
            let speechFile = try SpeechFixture.wavFile(SpeechFixture.sentence)
            let input = try SpeechFixture.speech(SpeechFixture.sentence)
            let speaker = try ChildProcess.intercom([
                "--unencrypted", "--port", "\(freeUDPPort())", "--no-discovery", "--peer", "127.0.0.1:\(forwarder.port)",
                "--input-file", speechFile.path, "--duration", "\(Double(input.count) / 48_000 + 1.5)", "--stats-json", speakerStats,
            ])
            // The speaker's SSRC, sent from another address, and a stranger's report that the
            // listener's stream is lost entirely (its SSRC read from the listener's own reports).
            var heardFromSpeaker: RecordingForwarder.Datagram?
            var heardFromListener: RecordingForwarder.Datagram?
            let speakerStarted = Date()
            while heardFromSpeaker == nil || heardFromListener == nil, Date().timeIntervalSince(speakerStarted) < 20 {
                usleep(50_000)
                let seen = forwarder.datagrams
                heardFromSpeaker = seen.first { $0.towardB && $0.bytes.count > 12 && $0.bytes[1] & 0x7F == 96 }
                heardFromListener = seen.first { !$0.towardB && $0.bytes.count >= 8 && (200...201).contains($0.bytes[1]) }
            }
            let speakerSSRC = heardFromSpeaker.map { UInt32($0.bytes[8]) << 24 | UInt32($0.bytes[9]) << 16 | UInt32($0.bytes[10]) << 8 | UInt32($0.bytes[11]) }
            let listenerSSRC = heardFromListener.map { UInt32($0.bytes[4]) << 24 | UInt32($0.bytes[5]) << 16 | UInt32($0.bytes[6]) << 8 | UInt32($0.bytes[7]) }
            #expect(speakerSSRC != nil && listenerSSRC != nil)
            let hijacker = stranger.sockets[1]
            // Reporters that never sent a stream: strangers, however often they report.
            let reporters = (0..<8).map { _ in LoopbackUDP() }
            for index in 0..<200 {
                let packet = RTPPacket(payloadType: 96, sequenceNumber: UInt16(30_000 + index), timestamp: UInt32(index * 960), ssrc: speakerSSRC ?? 0, payload: [0xF8, 0xFF, 0xFE])
                hijacker.send(packet.serialized(), to: listenerPort)
                let loss = ReportBlock(ssrc: listenerSSRC ?? 0, fractionLost: 255, cumulativeLost: 100_000, extendedHighestSequence: 1, jitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)
                stranger.rtcp([.receiverReport(RTCPReceiverReport(ssrc: 0xBAD, reportBlocks: [loss]))], from: reporters[index % reporters.count])
                usleep(10_000)
            }
            CallFixtures.expectClean([("speaker", speaker)], within: 15)
            let end = Self.residentMegabytes(listener.pid)
            usleep(500_000)
            listener.signal(SIGTERM)
            CallFixtures.expectClean([("listener", listener)], within: 15)

            let stats = try CallFixtures.readStats(listenerStats)
            // The speaker started seconds after the listener: look for its speech from then on.
            let started = Int(try CallFixtures.readStats(speakerStats).inputStartNs) - Int(stats.outputStartNs)
            let heard = try CallFixtures.readWAV(output).samples.dropFirst(max(0, started / 1_000_000 * 48 - 4_800))
            let correlation = CallFixtures.windowsOf(input: input, output: Array(heard)).correlations.median
            let speakerFigures = try CallFixtures.readStats(speakerStats)
            let real = stats.streams.first { $0.ssrc == speakerSSRC }
            let figures = "the speaker sent \(speakerFigures.sentPackets) packets (\(speakerFigures.security.unsentNoSession) before its session); "
                + "the listener received \(real?.received ?? -1) and lost \(real?.lost ?? -1) of its stream, \(stats.received) in all; "
                + "the speaker's input began \(Double(started) / 1e9) s after the listener's output (\(heard.count) samples searched)"
            print("hostile LAN: the real call's median correlation \(correlation); \(figures)")
            #expect(correlation > 0.8, "the real call did not play: median correlation \(correlation); \(figures)")
            // Memory: the tables are bounded and their entries left with their sources, so what the
            // attacks cost is a few MB at most (it was +39 MB for the BYE waves alone): about
            // 100 kB for each of the 32 streams strangers may hold, and what the allocator keeps
            // of streams that came and went. A second wave of as many new strangers finds the
            // room the first left, whatever the allocator made of the first.
            print("hostile LAN: RSS \(before) MB before the attacks, \(afterFirstFill) after the first wave, \(afterAttacks) after the second, \(end) at the end")
            #expect(afterFirstFill - before < 6, "RSS \(before) MB before the attacks, \(afterFirstFill) MB after the first wave")
            #expect(afterAttacks - afterFirstFill < 1, "RSS \(afterFirstFill) MB after the first wave of strangers, \(afterAttacks) MB after the second")
            #expect(end - before < 7, "RSS \(before) MB before the attacks, \(end) MB at the end")
            #expect(stats.dropped.malformed >= 120, "\(stats.dropped)")
            #expect(stats.dropped.tooLarge >= 15, "\(stats.dropped)")
            #expect(stats.dropped.unvalidated > 1000, "\(stats.dropped)")
            #expect(stats.dropped.refusedPeer >= 200, "\(stats.dropped)")
            #expect(stats.dropped.foreignSsrc >= 150, "\(stats.dropped)")
            #expect(stats.dropped.undecodable > 0, "\(stats.dropped)")
            // The stranger's 100 % loss reports moved nothing: FEC follows the real peer's.
            #expect(stats.fecExpectedLossPercent <= 5)
            // What is left at the end: the real speaker at most (it said BYE), no stranger.
            #expect(stats.peers.count <= 1, "\(stats.peers)")

            // The name on the plain status lines: shown, with none of its control sequences.
            let lines = listener.standardOutput
            #expect(lines.contains("evil"), "the stranger never showed up:\n\(lines)")
            for forbidden in ["\u{1B}", "\u{07}", "\u{9B}", "\u{202E}"] {
                #expect(!lines.contains(forbidden), "\(forbidden.unicodeScalars.first!.value) reached the status lines")
            }
        }

        @Test func aHostileNameCannotRewriteTheStatusScreen() throws {
            let tmux = EndToEndTests.TerminalTests.Tmux()
            let port = freeUDPPort()
            let command = "XDG_STATE_HOME=\(ChildProcess.sharedStateHome) \(ChildProcess.intercomPath) --unencrypted --no-discovery --port \(port) --mode ptt --name door; echo EXITED $?; sleep 30"
            _ = try tmux.run(["new-session", "-d", "-s", "names", "-x", "100", "-y", "20", command])
            // On a loaded machine the call takes seconds to start: the stranger speaks once it listens.
            try #require(waitForUDPListener(port: port), "the call did not start")
            _ = try tmux.screen("names", within: 20) { $0.contains("mode ptt") }
            Stranger(target: port).introduce(as: Self.hostileName, from: LoopbackUDP(), seconds: 1.5)
            // A stranger stays listed until 5 s after its last packet.
            let screen = try tmux.screen("names", within: 4) { $0.contains("evil") }
            let title = try tmux.run(["display-message", "-p", "-t", "names", "#{pane_title}"])
            _ = try tmux.run(["send-keys", "-t", "names", "q"])
            #expect(screen.contains("door") && screen.contains("mode ptt"), "the screen was cleared or never drawn:\n\(screen)")
            #expect(screen.contains("evil"), "the stranger is not on the screen:\n\(screen)")
            #expect(!screen.contains("\u{202E}") && !title.contains("pwned"), "title \(title), screen:\n\(screen)")
        }

        /// Files a stranger on the same machine could have planted: outputs that are links, and a
        /// status socket in a folder anyone may write.
        @Test func plantedLinksAndSharedFoldersAreRefusedByTheProgram() throws {
            let victim = temporaryPath("victim.txt")
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
            for option in ["--output-file", "--stats-json"] {
                let link = temporaryPath("planted-link")
                try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
                let process = try ChildProcess.intercom(["--no-discovery", "--port", "\(freeUDPPort())", option, link, "--duration", "1"])
                let status = process.wait(seconds: 15)
                #expect(status != nil && status != 0, "\(option) wrote through a link")
                #expect(process.standardError.contains(link), "\(process.standardError)")
                #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
            }
            let shared = temporaryPath("shared")
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
            chmod(shared, 0o777)
            let daemon = try ChildProcess.intercom(["daemon", "--no-discovery", "--port", "\(freeUDPPort())", "--status-socket", shared + "/intercom.sock"])
            let status = daemon.wait(seconds: 15)
            #expect(status != nil && status != 0, "a status socket in a folder anyone may write")
            #expect(daemon.standardError.contains(shared), "\(daemon.standardError)")
            #expect(!FileManager.default.fileExists(atPath: shared + "/intercom.sock"))
        }
    }
}
