import CLinux
import Glibc
import IntercomCore
import Synchronization

/// A dedicated OS thread that is joined, not abandoned, when its owner stops it.
///
/// Audio and network loops run on these rather than on a Swift concurrency executor, so
/// their timing never depends on what else the process is awaiting.
public final class JoinableThread: Sendable {
    private let thread: pthread_t
    /// Whoever sets it first joins: pthread_join may be called only once per thread.
    private let joined = Atomic<Bool>(false)
    public let name: String
    private let scheduling: ThreadScheduling

    /// Starts `body` at once on a new thread. `realtime` asks for SCHED_FIFO where the
    /// process may have it, and carries on at normal priority where it may not.
    public init(name: String, realtime: Bool = false, _ body: sending @escaping () -> Void) throws(ThreadError) {
        self.name = name
        let scheduling = ThreadScheduling()
        self.scheduling = scheduling
        thread = try startThread(ThreadBody(name: name, realtime: realtime, scheduling: scheduling, body: body))
    }

    /// Whether the thread runs at the real-time priority it asked for; nil until it has
    /// asked, and for a thread that did not. A loaded machine delays a thread at normal
    /// priority by milliseconds at a time: the figures that explain an audio fault.
    public var runsInRealTime: Bool? {
        switch scheduling.grant.load(ordering: .acquiring) {
        case .granted: true
        case .refused: false
        case .notAsked: nil
        }
    }

    /// Waits for the thread's body to return. Safe to call more than once.
    public func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pthread_join(thread, nil)
    }

    deinit { join() }
}

/// Starts `body` on a new thread nobody waits for: for work that ends by itself (its own
/// timeout) and whose owner must not wait for it when stopping.
public func startDetachedThread(name: String, _ body: sending @escaping () -> Void) throws(ThreadError) {
    pthread_detach(try startThread(ThreadBody(name: name, realtime: false, scheduling: ThreadScheduling(), body: body)))
}

/// Starts a thread running `body`, which it owns until it returns.
private func startThread(_ body: ThreadBody) throws(ThreadError) -> pthread_t {
    var thread = pthread_t()
    let box = Unmanaged.passRetained(body)
    let result = pthread_create(&thread, nil, { raw in
        let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
        body.run()
        return nil
    }, box.toOpaque())
    guard result == 0 else {
        box.release()
        throw ThreadError(name: body.name, code: result)
    }
    return thread
}

public struct ThreadError: Error, CustomStringConvertible {
    public let name: String
    public let code: Int32
    public var description: String { "could not start the \(name) thread: \(String(cString: strerror(code)))" }
}

/// What a thread that asked for real-time priority got, written by the thread itself.
private final class ThreadScheduling: Sendable {
    enum Grant: AtomicCase {
        case notAsked, granted, refused
        static let atomicOrder: [Grant] = [.notAsked, .granted, .refused]
    }

    let grant = Atomic<Grant>(.notAsked)
}

private final class ThreadBody {
    let name: String
    let realtime: Bool
    let scheduling: ThreadScheduling
    let body: () -> Void

    init(name: String, realtime: Bool, scheduling: ThreadScheduling, body: @escaping () -> Void) {
        self.name = name
        self.realtime = realtime
        self.scheduling = scheduling
        self.body = body
    }

    func run() {
        // Named, so `top -H`, a debugger and the allocation counter can tell the threads apart
        // (the kernel keeps 15 bytes of a name).
        _ = intercom_name_this_thread(String(decoding: name.utf8.prefix(15), as: UTF8.self))
        if realtime {
            var parameters = sched_param(sched_priority: realtimePriority)
            let granted = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters) == 0
            scheduling.grant.store(granted ? .granted : .refused, ordering: .releasing)
        }
        body()
    }
}

/// The SCHED_FIFO priority of the audio and network threads.
private let realtimePriority: Int32 = 10

/// Runs `body` with the calling thread at the audio threads' real-time priority (where the
/// process may have it), then puts the thread's own scheduling back. Threads that `body`
/// starts inherit that priority: ALSA's pulse and PipeWire plugins move a device's audio to
/// and from the sound server on a thread of their own, started when the device is opened, and
/// left at normal priority a busy machine starves it, so that the server's buffer for the
/// speaker runs dry (the echo then comes later than the canceller learned it) or the
/// microphone's overflows, without an xrun on this side.
public func withRealtimePriorityForNewThreads<Result, Failure: Error>(
    _ body: () throws(Failure) -> Result
) throws(Failure) -> Result {
    var policy: Int32 = 0
    var saved = sched_param()
    guard pthread_getschedparam(pthread_self(), &policy, &saved) == 0, policy != Int32(SCHED_FIFO) else { return try body() }
    var raised = sched_param(sched_priority: realtimePriority)
    guard pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &raised) == 0 else { return try body() }
    defer { _ = pthread_setschedparam(pthread_self(), policy, &saved) }
    return try body()
}
