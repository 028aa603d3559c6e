import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Testing
import TestSupport

/// The microphone's chain run on recordings, as `intercom bench-dsp` does.
@Suite struct MicrophoneChainRunTests {
    /// Far-end speech and a microphone that hears it `delay` samples (40 ms) later at half
    /// level, with a little noise.
    static func echoRecordings(delay: Int = 1_920) throws -> (far: [Int16], microphone: [Int16]) {
        let far = try SpeechFixture.speech(SpeechFixture.paragraph).map { $0 * 0.6 }
        var noise = SeededNoise(seed: 3)
        let microphone = (0..<far.count).map { index in
            int16(fromFloat: (index >= delay ? far[index - delay] * 0.5 : 0) + noise.sample() * 0.002)
        }
        return (far.map(int16(fromFloat:)), microphone)
    }

    /// An echo found level with the reference (10.5 ms after it is played, less the timeline's
    /// 10 ms margin: a speaker close to the microphone, timestamps exact) is placed 10 ms
    /// behind it, with room to come earlier: one move, made although the canceller already
    /// cancels it there (the judgement of moves by the canceller's prediction is for an echo
    /// already placed: applied to this one, it kept the echo unplaced and the acoustic lab's
    /// rooms lost 13-20 dB), and the canceller cancels as well as at 40 ms.
    @Test func anEchoLevelWithItsReferenceIsPlacedBehindItOnce() throws {
        let (far, microphone) = try Self.echoRecordings(delay: 504)
        var configuration = CallConfiguration()
        configuration.preprocessor.automaticGainControl = false
        let report = try MicrophoneChainRun(configuration: configuration).run(microphone: microphone, farEnd: far)
        #expect(report.echoDelayCorrections == 1 && report.echoMovesRefused == 0, "\(report.echoDelayCorrections) moves, \(report.echoMovesRefused) refused")
        #expect(report.echoDelayMilliseconds == 10, "echo kept \(report.echoDelayMilliseconds ?? -1) ms behind the reference")
        let half = report.cleaned.count / 2
        let before = SignalMeasures.energy(microphone[half..<report.cleaned.count].map(float(fromInt16:)))
        let after = SignalMeasures.energy(report.cleaned[half...].map(float(fromInt16:)))
        let reduction = SignalMeasures.decibels(before, over: after)
        #expect(reduction > 25, "echo reduced by \(reduction) dB")
    }

    /// The live chain cancels the echo of a recording as a call would: the signals find it
    /// 30 ms behind the reference (40 ms less the timeline's 10 ms margin), nothing re-syncs,
    /// and the second half comes out more than 25 dB quieter; every stage's cost is reported.
    @Test func theChainCancelsARecordedEchoAndSaysWhatEachStageCost() throws {
        let (far, microphone) = try Self.echoRecordings()
        var configuration = CallConfiguration()
        configuration.preprocessor.automaticGainControl = false
        let report = try MicrophoneChainRun(configuration: configuration).run(microphone: microphone, farEnd: far)
        let delay = try #require(report.echoDelayMilliseconds)
        #expect(abs(delay - 30) <= 1, "echo \(delay) ms behind the reference")
        #expect(report.echoReferenceResyncs == 0 && report.echoDelayCorrections == 0)
        let half = report.cleaned.count / 2
        let before = SignalMeasures.energy(microphone[half..<report.cleaned.count].map(float(fromInt16:)))
        let after = SignalMeasures.energy(report.cleaned[half...].map(float(fromInt16:)))
        let reduction = SignalMeasures.decibels(before, over: after)
        #expect(reduction > 25, "echo reduced by \(reduction) dB")
        #expect(report.stageSeconds.map(\.stage) == ["echo alignment", "echo canceller and preprocessor", "robust encoder", "low-delay encoder"])
        #expect(report.stageSeconds.allSatisfy { $0.seconds > 0 })
        #expect(report.transmits.count == microphone.count / 480)
    }

    /// VOX's decisions come one per 10 ms with the Pi profile's 20 ms frames too (the acoustic
    /// lab reads them so: one per 20 ms had every word counted as never sent), and the time
    /// they say was sent is the gate's.
    @Test func voxDecisionsComeEvery10MillisecondsWith20MillisecondFrames() throws {
        let (far, microphone) = try Self.echoRecordings()
        var configuration = CallConfiguration()
        configuration.adaptiveCodec = false
        configuration.encoder.frameMilliseconds = try #require(AudioProfile.pi.frameMilliseconds)
        let report = try MicrophoneChainRun(configuration: configuration).run(microphone: microphone, farEnd: far)
        #expect(report.transmits.count == microphone.count / 480)
        let standard = try MicrophoneChainRun(configuration: CallConfiguration()).run(microphone: microphone, farEnd: far)
        let (sentPi, sentStandard) = (report.transmits.filter { $0 }.count, standard.transmits.filter { $0 }.count)
        #expect(sentPi > 0 && abs(sentPi - sentStandard) <= sentStandard / 5, "\(sentPi) against \(sentStandard) decisions sent")
    }

    /// From the command line: the cleaned file and VOX's decisions are written, and the figures
    /// printed; a missing recording is a usage error, a file that is no WAV bad input.
    @Test func benchDSPWritesTheCleanedMicrophoneAndVOXsDecisions() throws {
        let (far, microphone) = try Self.echoRecordings()
        let (farPath, microphonePath) = (temporaryPath("far.wav"), temporaryPath("mic.wav"))
        for (samples, path) in [(far, farPath), (microphone, microphonePath)] {
            let audio = WAVCodec.Audio(sampleRate: 48_000, channels: 1, samples: samples.map(float(fromInt16:)))
            try Data(WAVCodec.encode(audio)).write(to: URL(fileURLWithPath: path))
        }
        let (output, vad) = (temporaryPath("cleaned.wav"), temporaryPath("vad.txt"))
        let run = spawnAndWait([
            ChildProcess.intercomPath, "bench-dsp", "--input-file", microphonePath, "--far-end-file", farPath,
            "--output-file", output, "--vad-file", vad,
        ], timeoutSeconds: 120)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("echo canceller and preprocessor") && run.output.contains("behind its reference"), "\(run.output)")
        let cleaned = try WAVCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect(abs(cleaned.frameCount - microphone.count) < 480)
        let decisions = try String(contentsOfFile: vad, encoding: .utf8).split(separator: "\n")
        #expect(decisions.count == microphone.count / 480 && decisions.allSatisfy { $0 == "0" || $0 == "1" })
        var attributes = stat()
        #expect(stat(output, &attributes) == 0 && attributes.st_mode & 0o777 == 0o600)

        #expect(spawnAndWait([ChildProcess.intercomPath, "bench-dsp"]).status == 64)
        let notWAV = temporaryPath("not.wav")
        try Data("not a wav".utf8).write(to: URL(fileURLWithPath: notWAV))
        #expect(spawnAndWait([ChildProcess.intercomPath, "bench-dsp", "--input-file", notWAV]).status == 65)
    }

    /// The frames the chain encoded, sealed, opened and played through a receive stream on a
    /// virtual clock, come out as the cleaned microphone, a little later: every receive stage
    /// ran and was timed.
    @Test func theSentFramesPlayBackAsTheCleanedMicrophone() throws {
        let speech = try SpeechFixture.speech(SpeechFixture.sentence).map(int16(fromFloat:))
        var configuration = CallConfiguration()
        configuration.preprocessor.automaticGainControl = false
        let chain = MicrophoneChainRun(configuration: configuration)
        let sent = try chain.run(microphone: speech, farEnd: [])
        let live = chain.configuration
        #expect(live.adaptsCodec && sent.sentFrameSamples == live.period.samples, "a live microphone's codec adapts: low-delay frames on a clean link")
        #expect(sent.sentFrames.count == speech.count / live.period.samples)
        let played = ReceiveChainRun(configuration: live).run(frames: sent.sentFrames, frameSamples: sent.sentFrameSamples)
        let cleaned = sent.cleaned.map(float(fromInt16:))
        let match = SignalAlignment.bestLag(of: cleaned, in: played.played, lags: 0...4_800)
        print("receive chain: played \(Double(match.lag) / 48) ms after capture, correlation \(match.correlation); \(played.stageSeconds)")
        #expect(match.correlation > 0.9, "correlation \(match.correlation) at \(match.lag) samples")
        #expect(match.lag > 0 && match.lag < 2_400, "played \(match.lag) samples after capture")
        #expect(played.stageSeconds.count == 5 && played.stageSeconds.allSatisfy { $0.seconds > 0 }, "\(played.stageSeconds)")
    }
}
