import Foundation
import IntercomCore
import IntercomIO
import Logging
import Testing
import TestSupport

/// Skips a test that needs the audio lab where PulseAudio is not installed.
let needsAudioLab: ConditionTrait = .enabled(if: AudioLab.isAvailable, Comment(rawValue: AudioLab.unavailableReason))

/// Runs `body` on a thread of its own, at real-time priority where permitted, as the intercom
/// runs audio, and awaits its result without holding one of the test runner's few threads.
///
/// Whatever must keep time (capture, playback, what happens between them) runs in one such
/// body: the runner's threads may be busy with other tests for seconds at a time.
func onAudioThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        startAudioThread { continuation.resume(with: Swift.Result { try body() }) }
    }
}

/// Starts `body` on a new thread, at real-time priority where permitted.
func startAudioThread(_ body: @escaping @Sendable () -> Void) {
    Thread {
        var parameters = sched_param(sched_priority: 10)
        _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
        body()
    }.start()
}

/// Captures from `device` on an audio thread of its own while `action` runs on this one,
/// starting `action` once the first frame is in and capturing for `tail` seconds after it.
/// Call it on an audio thread.
func whileCapturing<ActionResult: Sendable>(
    from device: String, periodSamples: Int = 480, tail: Double = 0.5, logger: Logger = Logger(label: "alsa-test"),
    _ action: () throws -> ActionResult
) throws -> (captured: EndpointReport, action: ActionResult) {
    let capturing = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let stop = Mailbox<Bool>()
    let captured = Mailbox<Result<EndpointReport, any Error>>()
    startAudioThread {
        captured.put(Result {
            try captureAudio(from: device, periodSamples: periodSamples, until: stop, capturing: capturing, logger: logger)
        })
        finished.signal()
    }
    _ = capturing.wait(timeout: .now() + 10)
    let outcome = Result { try action() }
    Thread.sleep(forTimeInterval: tail)
    stop.put(true)
    finished.wait()
    guard let report = captured.value else { throw CaptureFailure() }
    return (try report.get(), try outcome.get())
}

/// The capture thread ended without a report (it cannot: it always leaves one).
struct CaptureFailure: Error {}

/// A value handed from one thread to another.
final class Mailbox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?

    init(_ value: Value? = nil) { stored = value }

    var value: Value? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func put(_ value: Value) {
        lock.lock()
        stored = value
        lock.unlock()
    }
}

/// What an endpoint did, as seen once its audio thread has finished with it.
struct EndpointReport: Sendable {
    /// CLOCK_REALTIME nanoseconds just before the endpoint was created.
    var createdAt: UInt64
    var samples: [Float] = []
    var negotiated: ALSANegotiatedFormat?
    var counters: ALSAStreamCounters
    var firstSampleTime: WallClockTime?
    /// `delayNanoseconds` after the last frame.
    var delayNanoseconds: UInt64 = 0
}

/// What both ALSA endpoints tell of themselves.
protocol ReportingEndpoint: AnyObject {
    var negotiated: ALSANegotiatedFormat? { get }
    var counters: ALSAStreamCounters { get }
    var firstSampleTime: WallClockTime? { get }
    var delayNanoseconds: UInt64 { get }
    func close()
}

extension ALSACaptureSource: ReportingEndpoint {}
extension ALSAPlaybackSink: ReportingEndpoint {}

/// Opens an endpoint with `open` (timed from just before), lets `move` carry its audio, then
/// reports what it did and closes it.
func reporting<Endpoint: ReportingEndpoint>(
    _ open: () -> Endpoint, _ move: (Endpoint, inout EndpointReport) throws -> Void
) throws -> EndpointReport {
    let createdAt = SystemClock.realtimeNanoseconds()
    let endpoint = open()
    defer { endpoint.close() }
    var report = EndpointReport(createdAt: createdAt, negotiated: endpoint.negotiated, counters: endpoint.counters)
    try move(endpoint, &report)
    report.firstSampleTime = endpoint.firstSampleTime
    report.delayNanoseconds = endpoint.delayNanoseconds
    return report
}

/// Captures audio from an ALSA device in 10 ms frames (device periods of `periodSamples`), as
/// the capture thread does, until `stop` says so; signals `capturing` once the first frame is in.
func captureAudio(
    from device: String, periodSamples: Int = 480, until stop: Mailbox<Bool>, capturing: DispatchSemaphore, logger: Logger
) throws -> EndpointReport {
    try reporting {
        ALSACaptureSource(
            device: device, frameLength: .milliseconds(10), period: FrameLength(samples: periodSamples), bufferMilliseconds: 40, logger: logger)
    } _: { source, report in
        var frame = [Int16](repeating: 0, count: 480)
        while stop.value != true {
            _ = try source.read(into: &frame)
            if report.samples.isEmpty { capturing.signal() }
            report.samples += frame.map(float(fromInt16:))
        }
    }
}

/// Plays `samples` to an ALSA device in 10 ms frames (device periods of `periodSamples`), then
/// lets them play out.
func playAudio(
    _ samples: [Float], to device: String, periodSamples: Int = 480, logger: Logger = Logger(label: "alsa-test")
) throws -> EndpointReport {
    try reporting {
        ALSAPlaybackSink(
            device: device, frameLength: .milliseconds(10), period: FrameLength(samples: periodSamples), bufferMilliseconds: 40, logger: logger)
    } _: { sink, _ in
        for start in stride(from: 0, to: samples.count, by: 480) {
            let frame = Array(samples[start..<min(start + 480, samples.count)])
            try sink.write(frame + [Float](repeating: 0, count: 480 - frame.count))
        }
    }
}

/// Where `heard` holds `said` (within `maximumLag` samples), how alike the two are there,
/// and how much louder or quieter `heard` is.
///
/// Likeness is the median correlation of half-second windows, each aligned on its own: a
/// hiccup of the lab's PulseAudio under load then costs one window instead of hiding that
/// every word arrived.
func locate(_ said: [Float], in heard: [Float], maximumLag: Int) -> (lag: Int, correlation: Double, gainDecibels: Double) {
    // Level envelopes in 10 ms blocks find the lag roughly and cheaply; samples refine it.
    let block = 480
    let saidEnvelope = SignalMeasures.blockRMS(said, block: block).map(Float.init)
    let heardEnvelope = SignalMeasures.blockRMS(heard, block: block).map(Float.init)
    let rough = SignalMeasures.bestAlignment(of: saidEnvelope, in: heardEnvelope, lags: 0...(maximumLag / block)).lag * block
    let lags = max(0, rough - block)...min(maximumLag, rough + block)
    let lag = SignalMeasures.bestAlignment(of: said, in: heard, lags: lags, window: 48_000).lag
    let windows = SignalAlignment.windowedMatches(of: said, in: heard, around: lag, search: 960).map(\.correlation).sorted()
    let aligned = heard.dropFirst(lag).prefix(said.count)
    let gain = SignalMeasures.decibels(SignalMeasures.energy(aligned), over: SignalMeasures.energy(said.prefix(aligned.count)))
    return (lag, windows.isEmpty ? 0 : windows[windows.count / 2], gain)
}

/// A sine tone at 48 kHz.
func tone(hertz: Double, seconds: Double, amplitude: Float = 0.5) -> [Float] {
    (0..<Int(seconds * 48_000)).map { amplitude * Float(sin(2 * Double.pi * hertz * Double($0) / 48_000)) }
}

/// Keeps what a `Logger` is told, for assertions about what the user would read.
final class LogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var records: [(level: Logger.Level, message: String)] = []

    var logger: Logger {
        var logger = Logger(label: "alsa-test") { _ in RecordingHandler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    func messages(_ level: Logger.Level) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return records.filter { $0.level == level }.map(\.message)
    }

    fileprivate func record(_ level: Logger.Level, _ message: String) {
        lock.lock()
        records.append((level, message))
        lock.unlock()
    }
}

private struct RecordingHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        recorder.record(event.level, event.message.description)
    }
}
