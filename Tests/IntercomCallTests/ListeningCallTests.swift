import Foundation
import IntercomCore
import IntercomIO
import IntercomSecurity
import Testing
import TestSupport

extension EndToEndTests {
    /// How loud a paired device plays, remembered with it (`intercom volume`, `mute`,
    /// `unmute`): applied to a running call within 2 s and to every later call from its first packet.
    @Suite struct ListeningCallTests {
        typealias Device = NetworkEndToEndTests.SecureCallTests.Device

        /// A steady tone, so that a level is a level: 16 s of 440 Hz at 0.2 (the commands take
        /// their time on a loaded machine; the checks need 2 s after the last one).
        static let tone = (0..<(16 * 48_000)).map { Float(0.2 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }

        /// RMS of what B played from `from` to `to` seconds into its output.
        static func level(_ heard: [Float], from: Double, to: Double) -> Double {
            let range = (Int(from * 48_000)..<Int(to * 48_000)).clamped(to: 0..<heard.count)
            return range.isEmpty ? 0 : SignalMeasures.rms(heard[range])
        }

        static func run(_ arguments: [String]) {
            let command = try? ChildProcess.intercom(arguments)
            #expect(command?.wait(seconds: 20) == 0, "intercom \(arguments): \(command?.standardError ?? "did not start")")
        }

        @Test func aRememberedMuteAndVolumeApplyToARunningCallWithinTwoSecondsAndToTheNext() throws {
            let (a, b) = try Device.pairedBothWays(aAtB: "alice")
            var (mutedAt, unmutedAt) = (0.0, 0.0)
            // Two seconds of the call first.
            let (running, _) = try CallFixtures.twoPeerCallThroughForwarder(
                speaker: a.arguments, listener: b.arguments, samples: Self.tone, underWayAfter: 200
            ) { _ in
                // Timed from when each command has stored the change (a command takes a while to
                // start on a loaded machine).
                Self.run(["mute", "alice"] + b.arguments)
                mutedAt = Date().timeIntervalSince1970
                usleep(3_000_000)
                // Half as loud, and heard again.
                Self.run(["volume", "alice", "50"] + b.arguments)
                Self.run(["unmute", Fingerprint(publicKey: a.identity.publicKey).description] + b.arguments)
                unmutedAt = Date().timeIntervalSince1970
            }
            let start = Double(running.listener.outputStartNs) / 1e9
            let (muted, unmuted) = (mutedAt - start, unmutedAt - start)
            #expect(muted > 1 && unmuted > muted + 2.5, "muted \(muted) s and unmuted \(unmuted) s into B's output")
            let asSent = Self.level(running.heard, from: muted - 1, to: muted)
            #expect(asSent > 0.1, "the tone was heard as sent first: \(asSent)")
            let silent = Self.level(running.heard, from: muted + 2, to: unmuted)
            #expect(silent < 0.001, "still heard 2 s after the mute: \(silent)")
            let half = Self.level(running.heard, from: unmuted + 2, to: unmuted + 4)
            #expect(abs(20 * log10(max(half, 1e-9) / asSent) + 6.02) < 1, "50 % played at \(half) against \(asSent) as sent")

            // The next call plays A at half from its first packet; then muted, at all.
            let next = try CallFixtures.twoPeerCall(speaker: a.arguments, listener: b.arguments, samples: Self.tone)
            let loudest = SignalMeasures.blockRMS(next.heard, block: 4_800).max() ?? 0
            #expect(abs(20 * log10(max(loudest, 1e-9) / asSent) + 6.02) < 1, "the next call played A at \(loudest) against \(asSent) as sent")
            Self.run(["mute", "alice"] + b.arguments)
            let mutedCall = try CallFixtures.twoPeerCall(speaker: a.arguments, listener: b.arguments, samples: Self.tone)
            #expect(mutedCall.listener.received > 500, "A's packets still arrive (muted here, not refused)")
            #expect(SignalMeasures.blockRMS(mutedCall.heard, block: 480).max() ?? 0 < 0.001, "a muted device was heard")
        }
    }
}
