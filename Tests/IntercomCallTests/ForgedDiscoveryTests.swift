import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Logging
import Testing
import TestSupport

extension NetworkEndToEndTests {
    /// mDNS is not authenticated: anyone on the LAN can send a goodbye for a peer's service, or a
    /// record that moves it to another port. In an encrypted call neither ends the peer's session
    /// nor moves it; only silence, an authenticated BYE or an authenticated packet from elsewhere do.
    @Suite struct ForgedDiscoveryTests {
        @Test func aForgedGoodbyeOrMoveLeavesTheSessionAndItsAudio() throws {
            let (a, b) = try SecureCallTests.Device.pairedBothWays("mdns-a", "mdns-b")
            // A steady tone: packets flow without pauses, so any gap is the call's.
            let tone = (0..<(48_000 * 20)).map { Float(0.1 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }
            let input = temporaryPath("forged-mdns-tone.wav")
            try Data(WAVCodec.encode(.init(sampleRate: 48_000, channels: 1, samples: tone))).write(to: URL(fileURLWithPath: input))
            func call(_ device: SecureCallTests.Device, _ name: String) throws -> Call {
                var configuration = CallConfiguration()
                configuration.port = 0
                configuration.name = name
                configuration.security = CallSecurity(identity: device.identity, trustedDevices: device.trusted)
                let frame = configuration.period
                return try Call(
                    configuration: configuration, source: try WAVFileSource(path: input, frameLength: frame),
                    sink: try WAVFileSink(path: temporaryPath("forged-mdns-\(name).wav"), frameLength: frame), logger: Logger(label: "test"))
            }
            let (callA, callB) = (try call(a, "a"), try call(b, "b"))
            try callA.start()
            try callB.start()
            defer {
                callA.stop()
                callB.stop()
            }
            let bAddress = try SocketAddress.parse("127.0.0.1:\(callB.localPort)", label: "b")
            callA.discovered(.appeared(name: "b", address: bAddress))
            let started = Date()
            while callB.statistics().rtpReceived < 50, Date().timeIntervalSince(started) < 10 { usleep(50_000) }
            #expect(callB.statistics().rtpReceived >= 50, "B never heard A")
            let handshakes = callA.statistics().security.handshakes

            /// The longest time B heard nothing from A over `seconds`, and what it heard.
            func watch(seconds: Double) -> (longestGap: Double, heard: Int) {
                let first = callB.statistics().rtpReceived
                var (last, lastChange, longest) = (first, Date(), 0.0)
                let end = Date().addingTimeInterval(seconds)
                while Date() < end {
                    usleep(20_000)
                    let now = callB.statistics().rtpReceived
                    if now != last { (last, lastChange) = (now, Date()) }
                    longest = max(longest, Date().timeIntervalSince(lastChange))
                }
                return (longest, last - first)
            }
            // A forged goodbye for B's service, then a forged record moving it to the discard port.
            callA.discovered(.disappeared(name: "b"))
            let afterGoodbye = watch(seconds: 2)
            // B's own announcement comes back; then a forged one moves it.
            callA.discovered(.appeared(name: "b", address: bAddress))
            _ = watch(seconds: 0.5)
            callA.discovered(.appeared(name: "b", address: try SocketAddress.parse("127.0.0.1:9", label: "b")))
            let afterMove = watch(seconds: 2)
            // 50 packets a second or more flow; a second of nothing fails (without the rule, nothing at all).
            #expect(afterGoodbye.heard >= 50 && afterGoodbye.longestGap < 1, "after the goodbye: \(afterGoodbye)")
            #expect(afterMove.heard >= 50 && afterMove.longestGap < 1, "after the move: \(afterMove)")
            #expect(callA.statistics().security.handshakes == handshakes, "the session was never replaced")
        }
    }
}
