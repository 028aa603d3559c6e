import IntercomCore
import IntercomDSP
import Logging

/// Why an ALSA device could not be opened, or stopped carrying audio.
enum ALSAStreamFailure: Error, CustomStringConvertible {
    case device(ALSAError)
    case conversion(SpeexError)

    var description: String {
        switch self {
        case .device(let error): error.description
        case .conversion(let error): error.description
        }
    }
}

/// An open capture or playback device with its conversion to and from the voice format.
protocol ALSAStream: AnyObject {
    var pcm: ALSAPCM { get }
    /// Opens `device` for frames of `frameSamples`, asking for periods of `periodSamples`.
    init(device: String, frameSamples: Int, periodSamples: Int, bufferMilliseconds: Int, counters: ALSAStreamCounters) throws(ALSAStreamFailure)
}

extension ALSAStream {
    /// Opens the device, and a resampler between its rate and the voice format's where they differ.
    static func openDevice(
        _ device: String, direction: ALSADirection, periodSamples: Int, bufferMilliseconds: Int, counters: ALSAStreamCounters
    ) throws(ALSAStreamFailure) -> (ALSAPCM, Resampler?) {
        let pcm: ALSAPCM
        do {
            // A plugin's own thread (pulse, PipeWire) gets the audio threads' priority, from
            // whichever thread opens the device.
            pcm = try withRealtimePriorityForNewThreads { () throws(ALSAError) in
                try ALSAPCM(
                    device: device, direction: direction, periodSamples: periodSamples, bufferMilliseconds: bufferMilliseconds,
                    counters: counters)
            }
        } catch {
            throw .device(error)
        }
        let rate = pcm.format.sampleRate
        guard pcm.format.isResampled else { return (pcm, nil) }
        let (input, output) = direction == .capture ? (rate, VoiceFormat.sampleRate) : (VoiceFormat.sampleRate, rate)
        do {
            return (pcm, try Resampler(inputRate: input, outputRate: output))
        } catch {
            throw .conversion(error)
        }
    }
}

/// Keeps an ALSA device open when it can. When the device is missing, busy or fails, it
/// gives the stream up and tries again after pauses that grow from half a second to two
/// (a device plugged back in plays within two seconds, and a missing one costs one failed
/// open every two), logging once when the device goes and once when it comes back.
final class ALSAReconnector<Stream: ALSAStream> {
    let device: String
    let direction: ALSADirection
    let counters: ALSAStreamCounters
    private(set) var stream: Stream?
    private let open: () throws(ALSAStreamFailure) -> Stream
    private let logger: Logger
    private var isMissing = false
    private var isClosed = false
    private var openedAt: UInt64 = 0
    private var retryDelay = firstRetryDelay
    private var retryAt: UInt64 = 0

    private static var firstRetryDelay: UInt64 { 500_000_000 }
    private static var longestRetryDelay: UInt64 { 2_000_000_000 }

    /// Opens the stream at once, or schedules the first retry.
    init(
        device: String, direction: ALSADirection, frameSamples: Int, periodSamples: Int, bufferMilliseconds: Int,
        counters: ALSAStreamCounters, logger: Logger
    ) {
        self.device = device
        self.direction = direction
        self.counters = counters
        self.logger = logger
        open = { () throws(ALSAStreamFailure) in
            try Stream(
                device: device, frameSamples: frameSamples, periodSamples: periodSamples, bufferMilliseconds: bufferMilliseconds,
                counters: counters)
        }
        attemptOpen(now: SystemClock.monotonicNanoseconds())
    }

    /// The open stream; while there is none, first tries to open it again if the time has come.
    func current() -> Stream? {
        guard stream == nil, !isClosed else { return stream }
        let now = SystemClock.monotonicNanoseconds()
        if now >= retryAt { attemptOpen(now: now) }
        return stream
    }

    /// Gives up the stream that just failed; a later `current()` opens it again.
    func failed(_ failure: ALSAStreamFailure) {
        let now = SystemClock.monotonicNanoseconds()
        // Only a device that worked for a while starts over with short pauses; one that
        // fails soon after opening is flapping, and its pauses keep growing.
        if now - openedAt >= Self.longestRetryDelay { retryDelay = Self.firstRetryDelay }
        release()
        becameMissing("failed (\(failure))")
        scheduleRetry(now: now)
    }

    /// Closes the stream for good; the counters keep saying whether it was open until then.
    func close() {
        stream = nil
        isClosed = true
    }

    private func attemptOpen(now: UInt64) {
        do {
            let opened = try open()
            stream = opened
            openedAt = now
            counters.deviceOpen.store(true, ordering: .relaxed)
            if isMissing {
                isMissing = false
                counters.recoveryCount.wrappingAdd(1, ordering: .relaxed)
                logger.notice("ALSA \(direction.rawValue) device '\(device)' is back: \(opened.pcm.format.description)")
            } else {
                logger.info("ALSA \(direction.rawValue) device '\(device)' opened: \(opened.pcm.format.description)")
            }
        } catch {
            if !isMissing { becameMissing("is unavailable (\(error))") }
            scheduleRetry(now: now)
        }
    }

    private func scheduleRetry(now: UInt64) {
        retryAt = now + retryDelay
        retryDelay = min(2 * retryDelay, Self.longestRetryDelay)
    }

    private func becameMissing(_ what: String) {
        isMissing = true
        counters.faultCount.wrappingAdd(1, ordering: .relaxed)
        let standIn = direction == .capture ? "capturing silence" : "discarding audio"
        logger.warning("ALSA \(direction.rawValue) device '\(device)' \(what); \(standIn) and retrying until it is back")
    }

    private func release() {
        stream = nil
        counters.deviceOpen.store(false, ordering: .relaxed)
    }
}
