import Foundation
import IntercomCore
import IntercomIO
import IntercomSecurity
import Testing
import TestSupport

/// A value a closure that outlives its scope can change (under the caller's lock).
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

extension NetworkEndToEndTests {
    /// `intercom pair` between real processes, each with a state directory of its own.
    @Suite struct PairingTests {
        typealias Device = SecureCallTests.Device

        /// Starts a device waiting to pair on `port` and reads the code it prints.
        static func waiting(_ device: Device, port: Int, timeout: Int = 20) throws -> (ChildProcess, String) {
            let process = try ChildProcess.intercom(["pair", "--port", "\(port)", "--name", "door", "--timeout", "\(timeout)"] + device.arguments)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if let line = process.standardOutput.split(separator: "\n").first(where: { $0.hasPrefix("code: ") }) {
                    return (process, String(line.dropFirst(6)))
                }
                usleep(50_000)
            }
            Issue.record("no code printed: \(process.standardOutput) \(process.standardError)")
            return (process, "")
        }

        static func join(_ device: Device, code: String, port: Int) throws -> ChildProcess {
            try ChildProcess.intercom(["pair", "--code", code, "--peer", "127.0.0.1:\(port)", "--name", "laptop", "--timeout", "10"] + device.arguments)
        }

        @Test func theRightCodePairsBothDevicesWhichThenHearEachOther() throws {
            let (door, laptop) = (try Device("door"), try Device("laptop"))
            let port = freeUDPPort()
            let (waiter, code) = try Self.waiting(door, port: port)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            let joiner = try Self.join(laptop, code: code, port: port)
            #expect(joiner.wait(seconds: 15) == 0, "\(joiner.standardError)")
            #expect(waiter.wait(seconds: 15) == 0, "\(waiter.standardError)")
            let doorPrint = Fingerprint(publicKey: door.identity.publicKey).description
            let laptopPrint = Fingerprint(publicKey: laptop.identity.publicKey).description
            #expect(joiner.standardOutput.contains("paired with door (\(doorPrint))"), "\(joiner.standardOutput)")
            #expect(waiter.standardOutput.contains("paired with laptop (\(laptopPrint))"), "\(waiter.standardOutput)")
            #expect(try door.trusted.load().map(\.name) == ["laptop"])
            #expect(try laptop.trusted.trustedKeys() == [door.identity.publicKey])

            // The list survives restarts: a new process of each device calls the other.
            let run = try CallFixtures.twoPeerCall(speaker: laptop.arguments, listener: door.arguments)
            #expect(CallFixtures.correlation(run) > 0.8)
            let paired = spawnAndWait([ChildProcess.intercomPath, "paired", "--json"] + door.arguments)
            #expect(paired.output.contains("\"fingerprint\" : \"\(laptopPrint)\""), "\(paired.output)")
            #expect(try door.trusted.load().first?.lastSeen != nil, "the call noted when the laptop was last seen")
        }

        /// The joiner's confirmation and the waiting device's answer each lost once on the way
        /// (a forwarder between them drops the first copy of each): both are sent again until
        /// answered, and both devices pair. Before, each was sent once, and the joiner timed out.
        @Test func aLostConfirmationAndALostAnswerStillPairBothDevices() throws {
            let (door, laptop) = (try Device("door"), try Device("laptop"))
            let port = freeUDPPort()
            let (waiter, code) = try Self.waiting(door, port: port)
            let lost = NSLock(), lostTypes = Box<Set<UInt8>>([])
            let forwarder = RecordingForwarder(toB: port, losing: { datagram, _ in
                guard let type = datagram.first, type == 0x23 || type == 0x24 else { return false }
                return lost.withLock { lostTypes.value.insert(type).inserted }
            })
            defer { forwarder.stop() }
            let joiner = try Self.join(laptop, code: code, port: forwarder.port)
            #expect(joiner.wait(seconds: 15) == 0, "\(joiner.standardError)")
            #expect(waiter.wait(seconds: 15) == 0, "\(waiter.standardError)")
            #expect(try door.trusted.trustedKeys() == [laptop.identity.publicKey])
            #expect(try laptop.trusted.trustedKeys() == [door.identity.publicKey])
            let confirmations = forwarder.datagrams.filter { $0.towardB && $0.bytes.first == 0x23 }.count
            let answers = forwarder.datagrams.filter { !$0.towardB && $0.bytes.first == 0x24 }.count
            #expect(confirmations >= 3 && answers >= 2, "\(confirmations) confirmations, \(answers) answers")
        }

        @Test func aWrongCodeFailsOnBothSidesStoresNothingAndThreeKillTheCode() throws {
            let (door, laptop) = (try Device("door"), try Device("laptop"))
            let port = freeUDPPort()
            let (waiter, code) = try Self.waiting(door, port: port)
            let wrong = String(format: "%06d", (Int(code)! + 1) % 1_000_000)
            for attempt in 1...3 {
                let joiner = try Self.join(laptop, code: wrong, port: port)
                #expect(joiner.wait(seconds: 15) == 77, "attempt \(attempt): \(joiner.standardError)")
                #expect(joiner.standardError.contains("wrong code"))
            }
            #expect(waiter.wait(seconds: 15) == 77, "\(waiter.standardOutput) \(waiter.standardError)")
            #expect(waiter.standardOutput.contains("wrong code; 2 attempts left"), "\(waiter.standardOutput)")
            #expect(try door.trusted.load().isEmpty && laptop.trusted.load().isEmpty)
            // The right code is no use now: nobody answers it.
            let late = try Self.join(laptop, code: code, port: port)
            #expect(late.wait(seconds: 15) == 75)
        }

        /// The code reaches the asker over the status socket and nowhere else: the daemon's log
        /// (here its stderr, even at --verbose) says only that one was issued.
        @Test func aRunningDaemonPairsItsOwnIdentityThroughItsStatusSocket() throws {
            let (pi, laptop) = (try Device("pi"), try Device("laptop"))
            let socket = temporaryPath("pair-status.sock")
            let daemon = try ChildProcess.intercom(["daemon", "--status-socket", socket, "--no-discovery", "--port", "\(freeUDPPort())",
                                                    "--input-file", try SpeechFixture.wavFile(SpeechFixture.sentence).path,
                                                    "--output-file", temporaryPath("pi.wav"), "--duration", "20", "--verbose"] + pi.arguments)
            defer { daemon.signal(SIGTERM) }
            var started = Date()
            while access(socket, F_OK) != 0, Date().timeIntervalSince(started) < 10 { usleep(50_000) }
            // No --state-dir: the daemon's identity pairs, not this user's.
            let asker = try ChildProcess.intercom(["pair", "--socket", socket])
            var code = "", port = ""
            started = Date()
            while (code.isEmpty || port.isEmpty), Date().timeIntervalSince(started) < 10 {
                code = asker.standardOutput.split(separator: "\n").first { $0.hasPrefix("code: ") }.map { String($0.dropFirst(6)) } ?? ""
                if let range = daemon.standardError.range(of: #"port (\d+)\)"#, options: .regularExpression) {
                    port = String(daemon.standardError[range].dropFirst(5).dropLast())
                }
                usleep(50_000)
            }
            #expect(code.count == 6 && !port.isEmpty, "\(asker.standardOutput) \(daemon.standardError)")
            let joiner = try Self.join(laptop, code: code, port: Int(port) ?? 0)
            #expect(joiner.wait(seconds: 15) == 0, "\(joiner.standardError)")
            #expect(asker.wait(seconds: 15) == 0, "\(asker.standardOutput) \(asker.standardError)")
            #expect(asker.standardOutput.contains("paired with laptop"), "\(asker.standardOutput)")
            #expect(try pi.trusted.trustedKeys() == [laptop.identity.publicKey])
            #expect(try laptop.trusted.trustedKeys() == [pi.identity.publicKey])
            daemon.signal(SIGTERM)
            _ = daemon.wait(seconds: 10)
            #expect(daemon.standardError.contains("a code was issued"), "\(daemon.standardError)")
            // Compared number by number: a longer number that happens to hold the six digits is not the code.
            let numbers = daemon.standardError.split { !$0.isNumber }.map(String.init)
            #expect(code.count == 6 && !numbers.contains(code), "the code is in the daemon's log: \(daemon.standardError)")
        }

        /// `intercom unpair` without --state-dir, where a daemon runs, changes the daemon's list
        /// (over its status socket, as `pair` does), not the list of whoever typed it; the
        /// daemon's call then drops the device's session. Before, it changed its user's own list.
        @Test func unpairReachesARunningDaemonThroughItsStatusSocket() throws {
            let (pi, laptop) = (try Device("pi"), try Device("laptop"))
            try pi.trust(laptop, as: "laptop")
            try pi.trust(try Device("kitchen"), as: "kitchen")
            let socket = temporaryPath("unpair-status.sock")
            let daemon = try ChildProcess.intercom(["daemon", "--status-socket", socket, "--no-discovery", "--port", "\(freeUDPPort())",
                                                    "--input-file", try SpeechFixture.wavFile(SpeechFixture.sentence).path,
                                                    "--output-file", temporaryPath("pi.wav"), "--duration", "30"] + pi.arguments)
            defer { daemon.signal(SIGTERM) }
            #expect(waitUntil(seconds: 10, every: .milliseconds(50)) { access(socket, F_OK) == 0 } != nil, "\(daemon.standardError)")
            let unknown = try ChildProcess.intercom(["unpair", "nobody", "--socket", socket])
            #expect(unknown.wait(seconds: 10) == 64 && unknown.standardError.contains("no paired device is called nobody"), "\(unknown.standardError)")
            let unpair = try ChildProcess.intercom(["unpair", "laptop", "--socket", socket])
            let laptopPrint = Fingerprint(publicKey: laptop.identity.publicKey).description
            #expect(unpair.wait(seconds: 10) == 0, "\(unpair.standardError)")
            #expect(unpair.standardOutput.contains("unpaired laptop (\(laptopPrint)) from the running daemon"), "\(unpair.standardOutput)")
            #expect(try pi.trusted.load().map(\.name) == ["kitchen"])
            // How loud a device plays at the daemon goes the same way, into the daemon's list.
            let quieter = try ChildProcess.intercom(["volume", "kitchen", "30", "--socket", socket])
            #expect(quieter.wait(seconds: 10) == 0 && quieter.standardOutput.contains("kitchen ("), "\(quieter.standardError)")
            #expect(quieter.standardOutput.contains("volume 30 % in the running daemon"), "\(quieter.standardOutput)")
            let mute = try ChildProcess.intercom(["mute", "kitchen", "--socket", socket])
            #expect(mute.wait(seconds: 10) == 0 && mute.standardOutput.contains("volume 30 %, muted"), "\(mute.standardOutput) \(mute.standardError)")
            #expect(try pi.trusted.load().map(\.listening) == [PeerListening(volumePercent: 30, muted: true)])
            let tooLoud = try ChildProcess.intercom(["volume", "kitchen", "401", "--socket", socket])
            #expect(tooLoud.wait(seconds: 10) == 64, "\(tooLoud.standardError)")
            daemon.signal(SIGTERM)
            #expect(daemon.wait(seconds: 10) == 0, "\(daemon.standardError)")
        }

        @Test func bothDevicesGivenTheSameCodePairAndAnUnansweredCodeTimesOut() throws {
            let (a, b) = (try Device("a"), try Device("b"))
            let (portA, portB) = (freeUDPPort(), freeUDPPort())
            let first = try ChildProcess.intercom(["pair", "--code", "424242", "--port", "\(portA)", "--peer", "127.0.0.1:\(portB)", "--timeout", "10"] + a.arguments)
            let second = try ChildProcess.intercom(["pair", "--code", "424242", "--port", "\(portB)", "--peer", "127.0.0.1:\(portA)", "--timeout", "10"] + b.arguments)
            #expect(first.wait(seconds: 15) == 0, "\(first.standardError)")
            #expect(second.wait(seconds: 15) == 0, "\(second.standardError)")
            #expect(try a.trusted.trustedKeys() == [b.identity.publicKey] && b.trusted.trustedKeys() == [a.identity.publicKey])

            let lonely = try ChildProcess.intercom(["pair", "--port", "\(freeUDPPort())", "--timeout", "1"] + a.arguments)
            #expect(lonely.wait(seconds: 10) == 75)
            let usage = try ChildProcess.intercom(["pair", "--code", "12ab56"] + a.arguments)
            #expect(usage.wait(seconds: 10) == 64)
        }
    }
}
