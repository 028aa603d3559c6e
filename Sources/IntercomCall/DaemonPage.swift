import Glibc
import IntercomCore
import IntercomIO
import Logging
import Synchronization

/// A page sent by a running daemon, asked for over its status socket by `intercom page` with
/// the recording passed as an open file: the daemon's call sends it in place of its
/// microphone (`PageFeed`), from the daemon's identity and over the sessions it already has,
/// so it starts at once and reaches the devices paired with the daemon, not with whoever ran
/// the command. One page at a time.
///
/// Requests (`StatusRequest`): `page` or `page to TARGET` (the file beside it), `page result`.
public final class DaemonPage: Sendable {
    private let call: Call
    private let logger: Logger
    private let state = Mutex<State>(.idle)
    /// How long the network thread may take to send to the page's target; it turns every few milliseconds.
    private static let targetWait = Duration.milliseconds(500)
    /// The longest page a daemon sends.
    public static let maximumSeconds = 30
    /// The longest recording file read, in bytes (30 s at 48 kHz, stereo, 32 bits, with room to spare).
    public static let maximumFileBytes = 16 << 20

    private enum State {
        case idle
        case playing(devices: Int, target: CallTarget)
        case finished(devices: Int, target: CallTarget)
    }

    public init(call: Call, logger: Logger) {
        self.call = call
        self.logger = logger
    }

    /// Starts sending the WAV recording open at `file` to `target` (the call's own target when
    /// nil): `paging`, or a refusal.
    public func start(file: Int32, target: CallTarget?) -> StatusReply {
        let samples: [Int16]
        do {
            samples = try Self.read(file)
        } catch {
            return .refused(reason: TerminalText.sanitized(error.description), later: false)
        }
        let claimed = state.withLock { state -> Bool in
            if case .playing = state { return false }
            state = .playing(devices: 0, target: .all)
            return true
        }
        guard claimed else { return .refused(reason: "a page is already playing", later: true) }
        let target = target ?? call.chosenTarget
        let shown = TerminalText.sanitized(target.description)
        call.pageTarget(target)
        let devices = waitForReach(of: target)
        guard devices > 0, call.pageFeed.offer(samples) else {
            call.pageTarget(nil)
            state.withLock { $0 = .idle }
            logger.warning("page: no device of \(shown) can be reached: nothing was sent")
            return .refused(reason: "no device of \(shown) can be reached: nothing was sent", later: true)
        }
        state.withLock { $0 = .playing(devices: devices, target: target) }
        let seconds = Double(samples.count) / Double(VoiceFormat.sampleRate)
        logger.notice("page: sending \(seconds.fixed(1)) s to \(shown) (\(devices) devices) for a client of the status socket")
        do {
            try startDetachedThread(name: "page") { [self] in finish(devices: devices, target: target) }
        } catch {
            finish(devices: devices, target: target)
        }
        return .paging(devices: devices, seconds: seconds, target: shown)
    }

    /// How the page asked for last is going.
    public func result() -> StatusReply {
        state.withLock { state in
            switch state {
            case .idle: .refused(reason: "no page was asked for", later: false)
            case .playing: .pagePlaying
            case .finished(let devices, let target): .paged(devices: devices, target: TerminalText.sanitized(target.description))
            }
        }
    }

    /// How many devices the target reaches once the network thread sends to it (0 when it
    /// does not take it up within `targetWait`).
    private func waitForReach(of target: CallTarget) -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now + Self.targetWait
        while clock.now < deadline {
            if let devices = call.devicesReached(by: target) { return devices }
            usleep(10_000)
        }
        return 0
    }

    /// Waits for the capture thread to have taken the whole page, and the network thread the
    /// last packet, then gives the call its own target back.
    private func finish(devices: Int, target: CallTarget) {
        while call.pageFeed.isBusy { usleep(20_000) }
        usleep(60_000)
        call.pageTarget(nil)
        state.withLock { $0 = .finished(devices: devices, target: target) }
    }

    /// The recording in a regular file (never a pipe or a device, which could hold the status
    /// thread), at most `PageFeed.maximumSamples` long.
    private static func read(_ file: Int32) throws(AudioEndpointError) -> [Int16] {
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw AudioEndpointError(endpoint: "the page", reason: "a page is a regular WAV file")
        }
        guard status.st_size <= maximumFileBytes else {
            throw AudioEndpointError(endpoint: "the page", reason: "the file is larger than \(maximumFileBytes >> 20) MiB")
        }
        let samples = try WAVRecording.read(descriptor: file, size: Int(status.st_size), maximumSeconds: maximumSeconds)
        // The resampler may round a recording of the longest length up by a few samples.
        return Array(samples.prefix(PageFeed.maximumSamples))
    }
}
