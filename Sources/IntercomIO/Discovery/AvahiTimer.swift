import CAvahi
import Glibc

/// A one-shot timer on an Avahi event loop that runs `action` on the loop's thread.
///
/// Used from the loop's thread only, or while the loop is stopped.
final class AvahiTimer {
    private let api: UnsafePointer<AvahiPoll>
    private let action: () -> Void
    private var timeout: OpaquePointer?

    init(api: UnsafePointer<AvahiPoll>, action: @escaping () -> Void) {
        self.api = api
        self.action = action
    }

    deinit { cancel() }

    /// Runs `action` once, `milliseconds` from now; replaces any earlier schedule.
    func schedule(afterMilliseconds milliseconds: UInt32) {
        var deadline = timeval()
        avahi_elapse_time(&deadline, milliseconds, 0)
        if let timeout {
            api.pointee.timeout_update(timeout, &deadline)
            return
        }
        timeout = api.pointee.timeout_new(api, &deadline, { _, userdata in
            Unmanaged<AvahiTimer>.fromOpaque(userdata!).takeUnretainedValue().action()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Forgets the schedule and frees the loop's timeout.
    func cancel() {
        guard let timeout else { return }
        api.pointee.timeout_free(timeout)
        self.timeout = nil
    }
}
