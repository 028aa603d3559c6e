import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Logging
import Testing
import TestSupport

extension EndToEndTests {
    /// A talks from a file to B, whose speaker echoes into its microphone in a simulated room;
    /// what A hears back is B's microphone after B's echo canceller.
    @Suite struct EchoCancellationCallTests {
        struct Outcome {
            let returned: [Float]
            let farSpeech: [Float]
        }

        static func call(echoCancellation: Bool, room: SimulatedRoom, seconds: Double) async throws -> Outcome {
            let logger = Logger(label: "test")
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            let output = temporaryPath("returned.wav")

            var roomConfiguration = CallConfiguration()
            roomConfiguration.port = 0
            roomConfiguration.liveInput = true
            roomConfiguration.echoCancellation = echoCancellation
            roomConfiguration.preprocessor.automaticGainControl = false
            let inRoom = try Call(configuration: roomConfiguration, source: room.microphone, sink: room.speaker, logger: logger)

            var farConfiguration = CallConfiguration()
            farConfiguration.port = 0
            farConfiguration.staticPeers = [.loopbackIPv4(port: inRoom.localPort)]
            let far = try Call(
                configuration: farConfiguration, source: try WAVFileSource(path: speech.path, frameLength: farConfiguration.period),
                sink: try WAVFileSink(path: output, frameLength: farConfiguration.period), logger: logger
            )
            try inRoom.start()
            try far.start()
            try await Task.sleep(for: .seconds(seconds))
            far.stop()
            inRoom.stop()
            let returned = try WAVCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: output)))).samples
            return Outcome(returned: returned, farSpeech: try SpeechFixture.speech(SpeechFixture.paragraph))
        }

        @Test func echoReturningToTheTalkerIsAtLeast20dBWeakerThanWithoutCancellation() async throws {
            let seconds = 12.0
            async let cancelled = Self.call(
                echoCancellation: true, room: SimulatedRoom(echoDelayMilliseconds: 50, echoGain: 0.5), seconds: seconds
            )
            async let uncancelled = Self.call(
                echoCancellation: false, room: SimulatedRoom(echoDelayMilliseconds: 50, echoGain: 0.5), seconds: seconds
            )
            let (on, off) = try await (cancelled, uncancelled)
            // Judge the second half of the call, once the canceller has converged.
            let span = (Int(seconds * 48_000) / 2)..<(Int(seconds * 48_000) - 24_000)
            let withAEC = SignalMeasures.energy(on.returned[span.clamped(to: 0..<on.returned.count)])
            let withoutAEC = SignalMeasures.energy(off.returned[span.clamped(to: 0..<off.returned.count)])
            let reduction = SignalMeasures.decibels(withoutAEC, over: withAEC)
            #expect(SignalMeasures.rms(off.returned[span.clamped(to: 0..<off.returned.count)]) > 0.01, "no echo came back at all")
            #expect(reduction >= 20, "echo reduced by \(reduction) dB")
        }

        @Test func duringDoubleTalkTheRoomsOwnSpeechStillReachesTheTalker() async throws {
            let near = try SpeechFixture.speech(SpeechFixture.sentence, voice: .female).map { $0 * 0.7 }
            let start = 6 * 48_000
            let room = SimulatedRoom(echoDelayMilliseconds: 50, echoGain: 0.5, nearSpeech: near, nearSpeechStart: start)
            let outcome = try await Self.call(echoCancellation: true, room: room, seconds: 12)
            // The room's speech, found again in what the talker hears, during the far end's speech.
            let heard = Array(outcome.returned[min(start, outcome.returned.count)...])
            let match = SignalAlignment.windowedMatches(
                of: near, in: heard, around: SignalAlignment.bestLag(of: near, in: heard, lags: 0...24_000).lag, search: 2_400
            )
            let correlations = match.map(\.correlation).sorted()
            let median = correlations.isEmpty ? 0 : correlations[correlations.count / 2]
            #expect(median > 0.6, "near-end speech correlation \(median) over \(match.count) windows")
            let kept = SignalMeasures.decibels(SignalMeasures.energy(heard.prefix(near.count)), over: SignalMeasures.energy(near))
            #expect(kept > -6, "near-end speech level changed by \(kept) dB")
        }
    }
}
