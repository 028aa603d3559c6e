import Foundation
import IntercomCore
import Testing
import TestSupport

extension EndToEndTests {
    /// DTX, on by default: silence costs almost nothing on the wire, and speech after silence
    /// is heard from its first syllable.
    @Suite struct DiscontinuousTransmissionCallTests {
        static let blockSamples = 480

        /// The first 10 ms block at or after `start` in which the input speaks.
        static func speechOnset(in input: [Float], from start: Int) -> Int {
            stride(from: start, to: input.count - blockSamples, by: blockSamples).first {
                SignalMeasures.rms(input[$0..<($0 + blockSamples)]) > 0.02
            } ?? start
        }

        @Test func talkSpurtsAfterSilenceArriveFromTheirFirstFiftyMilliseconds() throws {
            let speech = try SpeechFixture.speech(SpeechFixture.sentence)
            let silence = [Float](repeating: 0, count: 2 * 48_000)
            let input = silence + speech + silence + speech + silence
            let run = try CallFixtures.twoPeerCall(speaker: [], listener: [], samples: input)
            // Where A's input began in B's output, by the two processes' clocks.
            let started = Int((Double(run.speaker.inputStartNs) - Double(run.listener.outputStartNs)) * 48_000 / 1e9)
            // DTX was on: the silences (three fifths of the input) went mostly unsent. Speech may
            // go as 5 ms frames (the low-delay encoder); of the 10 ms frames of silence, at most a
            // fifth (hang-overs, comfort-noise updates) may be sent. Without DTX they all would be.
            let speechPackets = 2 * speech.count / 240
            let silentFrames = 3 * silence.count / 480
            #expect(
                run.speaker.sentPackets < speechPackets + silentFrames / 5,
                "\(run.speaker.sentPackets) packets for \(speechPackets) 5 ms frames of speech and \(silentFrames) 10 ms frames of silence"
            )

            for spurt in [silence.count, 2 * silence.count + speech.count] {
                let onset = Self.speechOnset(in: input, from: spurt)
                // Where this spurt's first second shows up in the output (up to 1 s later).
                let heard = SignalAlignment.bestLag(
                    of: Array(input[onset..<(onset + 48_000)]), in: run.heard,
                    lags: max(0, started + onset)...(max(0, started + onset) + 48_000)
                )
                #expect(heard.correlation > 0.6, "spurt at \(onset): correlation \(heard.correlation)")
                // Each of its first five 10 ms blocks that speaks came out, at least a third as loud
                // (a clipped onset is silence or a fade-in from nothing).
                for block in 0..<5 {
                    let start = onset + block * Self.blockSamples
                    let said = SignalMeasures.rms(input[start..<(start + Self.blockSamples)])
                    guard said > 0.02 else { continue }
                    let out = heard.lag + block * Self.blockSamples
                    try #require(out + Self.blockSamples <= run.heard.count)
                    let level = SignalMeasures.rms(run.heard[out..<(out + Self.blockSamples)])
                    #expect(level > said / 3, "spurt at \(onset), block \(block): \(level) out for \(said) in")
                }
            }
        }

        @Test func aSilentStreamCostsAtMostEightKilobitsPerSecond() throws {
            let listenerPort = freeUDPPort()
            let forwarder = RecordingForwarder(toB: listenerPort)
            defer { forwarder.stop() }
            let silence = [Float](repeating: 0, count: 8 * 48_000)
            let run = try CallFixtures.twoPeerCall(speaker: [], listener: [], samples: silence, listenerPort: listenerPort,
                                                   speakerTarget: forwarder.port)
            #expect(run.listener.received > 0, "nothing of the call arrived")
            // From 2 s after the first sealed packet (the session up, DTX engaged) to the last.
            let sealed = forwarder.datagrams.filter { $0.towardB && $0.bytes.first == 4 }
            let first = try #require(sealed.first).at
            let steady = forwarder.datagrams.filter { $0.towardB && $0.at >= first + .seconds(2) }
            let span = try #require(steady.last).at - first - .seconds(2)
            try #require(span > .seconds(3), "the call was too short to judge: \(span)")
            // Every byte toward B, with 28 bytes of IPv4 and UDP headers per datagram.
            let bits = steady.reduce(0) { $0 + 8 * ($1.bytes.count + 28) }
            let kilobitsPerSecond = Double(bits) / span.seconds / 1000
            #expect(kilobitsPerSecond <= 8, "\(kilobitsPerSecond) kb/s in silence over \(span)")
        }
    }
}
