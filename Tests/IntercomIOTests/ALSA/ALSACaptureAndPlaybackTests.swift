import Foundation
import IntercomCore
import IntercomIO
import Testing
import TestSupport

/// The ALSA endpoints against 48 kHz mono lab devices, checked with PulseAudio's own tools:
/// `paplay` speaks into the microphone, `parecord` listens to the speaker.
@Suite(needsAudioLab) struct ALSACaptureAndPlaybackTests {
    /// Device periods of a whole frame (10 ms) and of half of one, as calls ask for (5 ms).
    static let periods = [480, 240]

    @Test(arguments: periods) func captureHearsSpeechPlayedIntoTheDevice(periodSamples: Int) async throws {
        let lab = try await AudioLab.start(devices: ["mic_a"])
        defer { lab.stop() }
        let speech = try SpeechFixture.speech(SpeechFixture.sentence)
        let speechFile = try SpeechFixture.wavFile(SpeechFixture.sentence)
        let device = lab.alsaName("mic_a")

        let (report, playerStatus) = try await onAudioThread {
            try whileCapturing(from: device, periodSamples: periodSamples) { () throws -> Int32? in
                // A 3 s sentence; the bound catches a hang only (with other builds on both cores
                // paplay took over 10 s to play it).
                try lab.inject(speechFile, into: "mic_a").wait(seconds: 60)
            }
        }

        #expect(playerStatus == 0)
        #expect(report.negotiated?.sampleRate == 48_000)
        #expect(report.negotiated?.conversions == [])
        #expect(report.negotiated?.periodFrames == periodSamples)
        let match = locate(speech, in: report.samples, maximumLag: max(96_000, report.samples.count - speech.count))
        #expect(match.correlation > 0.95, "speech arrives intact: \(match)")
        #expect(abs(match.gainDecibels) < 1, "at the level it was played")
        #expect(report.counters.xruns == 0)
        // The first sample was captured after the source was created, and before its first period ended.
        let firstSample = try #require(report.firstSampleTime).nanosecondsSince1970
        #expect(firstSample >= report.createdAt - 20_000_000 && firstSample < report.createdAt + 500_000_000)
        #expect(report.delayNanoseconds < 100_000_000)
    }

    @Test(arguments: periods) func playbackReachesTheDevice(periodSamples: Int) async throws {
        let lab = try await AudioLab.start(devices: ["spk_a"])
        defer { lab.stop() }
        let speech = try SpeechFixture.speech(SpeechFixture.sentence)
        let recording = temporaryPath("spk_a.raw")
        defer { try? FileManager.default.removeItem(atPath: recording) }
        let recorder = try lab.record("spk_a", to: recording)
        // The monitor delivers silence as soon as the recorder is connected.
        try await waitUntil { ((try? FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int) ?? 0) > 0 }
        let device = lab.alsaName("spk_a")

        let (report, elapsed) = try await onAudioThread {
            let started = ContinuousClock.now
            let report = try playAudio(speech, to: device, periodSamples: periodSamples)
            return (report, ContinuousClock.now - started)
        }
        let heard = try await offTheRunner { try lab.finishRecording(recorder, path: recording) }

        #expect(report.negotiated?.conversions == [])
        #expect(report.negotiated?.periodFrames == periodSamples)
        // The recorder runs from before the playback: on a busy machine the speech may start well
        // into the recording, so it is looked for anywhere in it (the level envelopes make that cheap).
        let match = locate(speech, in: heard, maximumLag: max(96_000, heard.count - speech.count))
        #expect(match.correlation > 0.95, "speech arrives intact: \(match)")
        #expect(abs(match.gainDecibels) < 1, "at the level it was written")
        // Writing blocks like a sound card: the speech takes its own length to play.
        let length = Duration.milliseconds(speech.count / 48)
        #expect(elapsed > length - .milliseconds(100) && elapsed < length + .milliseconds(800), "took \(elapsed)")
        #expect(report.counters.xruns == 0)
        #expect(report.firstSampleTime != nil)
        #expect(report.delayNanoseconds > 0 && report.delayNanoseconds < 150_000_000)
    }

    @Test func echoPathCarriesTheSpeakerIntoTheMicrophoneLater() async throws {
        let lab = try await AudioLab.start(devices: ["mic_a", "spk_a"])
        defer { lab.stop() }
        try lab.addEchoPath(from: "spk_a", into: "mic_a", delayMilliseconds: 150)
        let speech = try SpeechFixture.speech("The quick brown fox jumps over the lazy dog.")
        let (microphone, speaker) = (lab.alsaName("mic_a"), lab.alsaName("spk_a"))

        let (heard, _) = try await onAudioThread {
            try whileCapturing(from: microphone, tail: 0.8) { try playAudio(speech, to: speaker) }
        }

        let match = locate(speech, in: heard.samples, maximumLag: 96_000)
        // The path is a delay line on the microphone's clock: the speech comes back whole.
        #expect(match.correlation > 0.95, "the speaker is heard in the microphone: \(match)")
        #expect(abs(match.gainDecibels) < 1, "at the level it was played")
        #expect(match.lag > 150 * 48, "no sooner than the echo path's delay")
    }
}
