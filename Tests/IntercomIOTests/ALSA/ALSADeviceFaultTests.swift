import Foundation
import IntercomCore
import IntercomIO
import Testing
import TestSupport

/// Devices that are missing, or vanish and come back, never stop the audio threads.
@Suite struct ALSADeviceFaultTests {
    static let missingDevice = "intercom_test_no_such_device"

    @Test func missingCaptureDeviceWarnsOnceAndCapturesSilenceInRealTime() async throws {
        let log = LogRecorder()
        let logger = log.logger
        let started = ContinuousClock.now
        // 1.2 s: long enough for the first attempt to reopen it (after half a second), which must stay quiet.
        let (report, allReadsSaidMore) = try await onAudioThread {
            let createdAt = SystemClock.realtimeNanoseconds()
            let source = ALSACaptureSource(device: Self.missingDevice, frameLength: .milliseconds(10), bufferMilliseconds: 40, logger: logger)
            var report = EndpointReport(createdAt: createdAt, negotiated: source.negotiated, counters: source.counters)
            var frame = [Int16](repeating: 1, count: 480)
            var allReadsSaidMore = true
            for _ in 0..<120 {
                allReadsSaidMore = try source.read(into: &frame) && allReadsSaidMore
                report.samples += frame.map(float(fromInt16:))
            }
            report.firstSampleTime = source.firstSampleTime
            return (report, allReadsSaidMore)
        }
        let elapsed = ContinuousClock.now - started

        #expect(report.negotiated == nil)
        #expect(report.samples.allSatisfy { $0 == 0 })
        #expect(allReadsSaidMore, "a missing microphone is silence, not the end of the input")
        #expect(elapsed >= .milliseconds(1_190), "silence comes in real time")
        #expect(report.firstSampleTime != nil)
        let warnings = log.messages(.warning)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("'\(Self.missingDevice)'") == true)
        #expect(warnings.first?.contains("snd_pcm_open: No such file or directory") == true)
        #expect(report.counters.faults == 1)
        #expect(!report.counters.isDeviceOpen)
    }

    @Test func missingPlaybackDeviceWarnsOnceAndDiscardsInRealTime() async throws {
        let log = LogRecorder()
        let logger = log.logger
        let started = ContinuousClock.now
        let report = try await onAudioThread {
            try playAudio(tone(hertz: 440, seconds: 1.2), to: Self.missingDevice, logger: logger)
        }
        let elapsed = ContinuousClock.now - started

        #expect(elapsed >= .milliseconds(1_190), "frames are discarded in real time")
        #expect(log.messages(.warning).count == 1)
        #expect(log.messages(.warning).first?.contains("snd_pcm_open: No such file or directory") == true)
        #expect(report.counters.faults == 1)
        #expect(report.firstSampleTime != nil)
    }

    /// A device pulled out mid-stream (its null sink unloaded) and plugged back: playback
    /// plays a tone into it and capture listens to it, before, while and after it is gone.
    @Test(needsAudioLab) func deviceThatVanishesMidStreamIsSurvivedAndResumes() async throws {
        // A lab of one device: PulseAudio would move the streams to any other sink.
        let lab = try await AudioLab.start(devices: ["mic_a"])
        defer { lab.stop() }
        let device = lab.alsaName("mic_a")
        let log = LogRecorder()
        let logger = log.logger
        let run = AudioRun()

        async let played: Void = onAudioThread {
            let sink = ALSAPlaybackSink(device: device, frameLength: .milliseconds(10), bufferMilliseconds: 40, logger: logger)
            run.playbackCounters.put(sink.counters)
            let frame = tone(hertz: 440, seconds: 0.01)
            while !run.isStopped { try sink.write(frame) }
            sink.close()
        }
        async let levels = onAudioThread {
            let source = ALSACaptureSource(device: device, frameLength: .milliseconds(10), bufferMilliseconds: 40, logger: logger)
            run.captureCounters.put(source.counters)
            var frame = [Int16](repeating: 0, count: 480)
            var levels: [TimedLevel] = []
            while !run.isStopped {
                _ = try source.read(into: &frame)
                let level = TimedLevel(at: .now, rms: SignalMeasures.rms(frame.map(float(fromInt16:))))
                run.lastLevel.put(level.rms)
                levels.append(level)
            }
            source.close()
            return levels
        }
        let hearsTheTone = { (run.lastLevel.value ?? 0) > 0.2 }

        try await waitUntil(hearsTheTone)
        let toneArrived = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(1_000))
        let unplugged = ContinuousClock.now
        try lab.unplug("mic_a")
        try await Task.sleep(for: .milliseconds(1_000))
        try lab.plug("mic_a")
        // Both reopen at their next retry (after pauses of 0.5, 1, 2, 2 s), and the tone returns.
        try await waitUntil {
            (run.playbackCounters.value?.recoveries ?? 0) >= 1 && (run.captureCounters.value?.recoveries ?? 0) >= 1
                && hearsTheTone()
        }
        try await Task.sleep(for: .milliseconds(500))
        let counters = [run.playbackCounters.value, run.captureCounters.value]
        #expect(counters.allSatisfy { $0?.isDeviceOpen == true })
        run.stop()
        try await played
        let captured = try await levels

        // Once per direction; a reopened stream that the busy lab drops again is another
        // fault, still warned once and recovered once.
        let faults = counters.map { $0?.faults ?? 0 }
        for counters in counters {
            #expect((counters?.faults ?? 0) >= 1)
            #expect(counters?.recoveries == counters?.faults)
        }
        let warnings = log.messages(.warning)
        #expect(warnings.count == faults.reduce(0, +), "one warning for each fault: \(warnings)")
        #expect(warnings.allSatisfy { $0.contains("'\(device)'") && $0.contains("failed (snd_pcm_") })
        #expect(log.messages(.notice).filter { $0.contains("is back") }.count == faults.reduce(0, +))

        // Nearly every frame: the lab's PulseAudio may hiccup when the machine is busy.
        let mostly = { (levels: [TimedLevel]) in levels.filter { $0.rms > 0.2 }.count * 10 >= levels.count * 9 }
        let before = captured.filter { $0.at > toneArrived && $0.at < unplugged }
        #expect(before.count > 80 && mostly(before), "the tone until the device goes")
        #expect(captured.contains { $0.at > unplugged && $0.rms == 0 }, "silence while it is gone")
        #expect(mostly(Array(captured.suffix(30))), "the tone again once it is back")
    }
}

/// One captured frame's level and when it was read.
struct TimedLevel: Sendable {
    let at: ContinuousClock.Instant
    let rms: Double
}

/// What the test and its two audio threads share.
final class AudioRun: Sendable {
    let playbackCounters = Mailbox<ALSAStreamCounters>()
    let captureCounters = Mailbox<ALSAStreamCounters>()
    let lastLevel = Mailbox<Double>()
    private let stopped = Mailbox<Bool>()

    var isStopped: Bool { stopped.value ?? false }
    func stop() { stopped.put(true) }
}
