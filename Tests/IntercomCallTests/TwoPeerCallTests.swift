import Foundation
import IntercomCore
import Testing
import TestSupport

extension EndToEndTests {
    /// Two real `intercom` processes over loopback, file in and file out.
    @Suite struct TwoPeerCallTests {
        @Test func cleanLinkDeliversTheInputWithoutGaps() throws {
            let run = try CallFixtures.twoPeerCall(speaker: [], listener: [])
            let (input, heard, sender, receiver) = (run.input, run.heard, run.speaker, run.listener)
            let alignment = CallFixtures.align(input: input, output: heard, senderStats: sender, receiverStats: receiver)
            #expect(alignment.correlation > 0.8, "median correlation \(alignment.correlation)")
            #expect(alignment.wellMatched > 0.9, "\(alignment.windows)")
            #expect(alignment.delayMilliseconds > 0 && alignment.delayMilliseconds < 120, "delay \(alignment.delayMilliseconds) ms")
            // On a clean link the delay barely moves during the call.
            #expect(alignment.largestDelayMilliseconds - alignment.smallestDelayMilliseconds < 25, "\(alignment.windows)")
            let gaps = CallFixtures.silentBlocks(input: input, output: heard, alignment: alignment)
            #expect(gaps.spoken > 100)
            #expect(gaps.gaps == 0, "\(gaps.gaps) of \(gaps.spoken) spoken blocks came out silent, at \(gaps.at) s of the input")
            #expect(receiver.lost == 0)
            // No loss reported: FEC stays small, so the primary frames keep their bits.
            #expect(sender.fecExpectedLossPercent == 1)
            #expect(receiver.received >= sender.sentPackets - 2)
            // The output file runs on the wall clock from its first sample: its length is its running time.
            let expectedSamples = run.listener.runningSeconds * 48_000
            #expect(abs(Double(heard.count) - expectedSamples) < 0.05 * expectedSamples)
        }

        @Test func tenPercentLossWithJitterIsConcealedAndCounted() throws {
            let input = try SpeechFixture.speech(SpeechFixture.sentence)
            let (portB, relayA, relayB) = (freeUDPPort(), freeUDPPort(), freeUDPPort())
            // The listener runs long enough to hear the speaker's last packets even when it starts
            // late on a busy machine: packets after the last one heard are not known to be lost.
            let extra = 2.0
            // The relay runs until the call is over (SIGTERM stops it cleanly).
            let relay = try ChildProcess.intercom([
                "relay", "--listen-a", "127.0.0.1:\(relayA)", "--listen-b", "127.0.0.1:\(relayB)",
                "--peer-b", "127.0.0.1:\(portB)", "--network", "loss=10,delay=30ms,jitter=15ms,seed=7",
                "--duration", "\(CallFixtures.speakerSeconds(input) + extra + 60)",
            ])
            try #require(waitForUDPListener(port: relayA), "the relay did not start")
            let run = try CallFixtures.twoPeerCall(speaker: [], listener: [], listenerPort: portB, speakerTarget: relayA, listenerExtraSeconds: extra)
            relay.signal(SIGTERM)
            CallFixtures.expectClean([("relay", relay)], within: 10)
            let (heard, sender, receiver) = (run.heard, run.speaker, run.listener)
            let sent = sender.sentPackets
            let received = receiver.received
            let lost = receiver.lost
            let repaired = receiver.recoveredFec + receiver.concealed
            #expect(sent > 300)
            // About a tenth of the packets never arrive, and the receiver knows it.
            #expect(Double(sent - received) > 0.05 * Double(sent) && Double(sent - received) < 0.16 * Double(sent))
            // Packets before the stream passed validation (RFC 3550 probation, which loss and
            // reordering can prolong at the start) are dropped unseen: a few, not counted as lost.
            // Packets made before the encrypted session was up were never sent at all.
            let unsent = sender.security.unsentNoSession
            #expect(lost > 0 && lost >= sent - unsent - received - 12, "sent \(sent) (\(unsent) before the session), received \(received), lost \(lost)")
            #expect(repaired >= lost, "lost \(lost), repaired \(repaired)")
            #expect(receiver.recoveredFec > 0)
            // The sender sized its FEC to the loss the receiver reported.
            #expect(sender.fecExpectedLossPercent >= 8, "\(sender)")
            let expectedSamples = run.listener.runningSeconds * 48_000
            #expect(abs(Double(heard.count) - expectedSamples) < 0.05 * expectedSamples)
            let alignment = CallFixtures.align(input: input, output: heard, senderStats: sender, receiverStats: receiver)
            #expect(alignment.correlation > 0.6, "median correlation \(alignment.correlation)")
            #expect(alignment.delayMilliseconds < 250, "delay \(alignment.delayMilliseconds) ms")
        }
    }
}
