import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Logging
import Testing
import TestSupport

extension EndToEndTests {
    @Suite struct TalkToneCallTests {
        /// Dominant frequency of a stretch, from its zero crossings.
        static func frequency(_ samples: ArraySlice<Float>) -> Double {
            let crossings = zip(samples, samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
            return Double(crossings) / (Double(samples.count) / 48_000)
        }

        @Test func theFarEndHearsARisingToneAtTheStartAndAFallingOneAtTheEnd() async throws {
            let logger = Logger(label: "test")
            // Longer than the test runs, however late a busy runner wakes it.
            let silence = temporaryPath("silence.wav")
            try Data(WAVCodec.encode(.init(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0, count: 48_000 * 30))))
                .write(to: URL(fileURLWithPath: silence))
            let output = temporaryPath("tones-out.wav")

            var listening = CallConfiguration()
            listening.port = 0
            let listener = try Call(
                configuration: listening, source: SilentSource(frameLength: listening.period),
                sink: try WAVFileSink(path: output, frameLength: listening.period), logger: logger
            )
            var talking = CallConfiguration()
            talking.port = 0
            talking.mode = .ptt
            talking.talkTones = true
            talking.staticPeers = [.loopbackIPv4(port: listener.localPort)]
            let talker = try Call(
                configuration: talking, source: try WAVFileSource(path: silence, frameLength: talking.period),
                sink: NullSink(frameLength: talking.period), logger: logger
            )
            try listener.start()
            try talker.start()
            try await Task.sleep(for: .milliseconds(700))
            // Held for about a second: as long as it really was is measured, since a busy runner
            // may wake the test late.
            talker.setTalkKey(held: true)
            let pressed = ContinuousClock.now
            try await Task.sleep(for: .seconds(1))
            talker.setTalkKey(held: false)
            let held = (ContinuousClock.now - pressed).seconds
            try await Task.sleep(for: .milliseconds(800))
            talker.stop()
            listener.stop()

            let heard = try CallFixtures.readWAV(output).samples
            let blocks = SignalMeasures.blockRMS(heard, block: 480)
            let loud = blocks.indices.filter { blocks[$0] > 0.03 }
            // Two bursts of about 80 ms, about a second apart, and nothing else.
            let bursts = loud.reduce(into: [[Int]]()) { groups, block in
                if let last = groups.last?.last, block - last <= 2 { groups[groups.count - 1].append(block) } else { groups.append([block]) }
            }
            #expect(bursts.count == 2, "bursts at blocks \(bursts)")
            guard bursts.count == 2 else { return }
            #expect(bursts.allSatisfy { (5...11).contains($0.count) }, "\(bursts)")
            let gap = Double(bursts[1][0] - bursts[0][0]) / 100
            #expect(abs(gap - held) < 0.2, "bursts \(gap) s apart, the key held for \(held) s")
            let start = bursts[0][0] * 480
            let end = bursts[1][0] * 480
            #expect(Self.frequency(heard[(start + 240)..<(start + 1_680)]) < Self.frequency(heard[(start + 2_160)..<(start + 3_600)]))
            #expect(Self.frequency(heard[(end + 240)..<(end + 1_680)]) > Self.frequency(heard[(end + 2_160)..<(end + 3_600)]))
        }
    }
}
