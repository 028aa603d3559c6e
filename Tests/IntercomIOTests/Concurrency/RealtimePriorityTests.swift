import Glibc
import IntercomIO
import Testing

@Suite struct RealtimePriorityTests {
    /// A thread's scheduling policy and priority.
    struct Scheduling: Equatable {
        var policy: Int32 = -1
        var priority: Int32 = -1

        /// The calling thread's.
        static func current() -> Scheduling {
            var policy: Int32 = 0
            var parameters = sched_param()
            _ = pthread_getschedparam(pthread_self(), &policy, &parameters)
            return Scheduling(policy: policy, priority: parameters.sched_priority)
        }
    }

    /// What the threads saw, written before they are joined and read after.
    final class Seen: @unchecked Sendable {
        var allowed = false
        var helper = Scheduling()
        var openerBefore = Scheduling()
        var openerAfter = Scheduling()
    }

    /// Whether a thread of this process may run at SCHED_FIFO (root, CAP_SYS_NICE or an
    /// RLIMIT_RTPRIO), asked of a probe thread.
    static func mayRunInRealTime() throws -> Bool {
        let seen = Seen()
        try JoinableThread(name: "probe") {
            var parameters = sched_param(sched_priority: 1)
            seen.allowed = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters) == 0
        }.join()
        return seen.allowed
    }

    /// A sound library's helper thread, started while a device is opened, runs at the audio
    /// threads' priority where the process may have it (root, CAP_SYS_NICE or an
    /// RLIMIT_RTPRIO) and at normal priority where it may not; the opening thread gets its
    /// own scheduling back.
    @Test func aThreadStartedWhileOpeningADeviceGetsTheAudioPriority() throws {
        let seen = Seen()
        seen.allowed = try Self.mayRunInRealTime()
        try JoinableThread(name: "opener") {
            seen.openerBefore = Scheduling.current()
            // What a plugin does inside snd_pcm_open: a plain pthread with default attributes.
            withRealtimePriorityForNewThreads {
                var thread = pthread_t()
                let box = Unmanaged.passRetained(seen)
                _ = pthread_create(&thread, nil, { raw in
                    Unmanaged<Seen>.fromOpaque(raw!).takeRetainedValue().helper = Scheduling.current()
                    return nil
                }, box.toOpaque())
                pthread_join(thread, nil)
            }
            seen.openerAfter = Scheduling.current()
        }.join()
        #expect(seen.openerBefore.policy == Int32(SCHED_OTHER))
        #expect(seen.openerAfter == seen.openerBefore)
        if seen.allowed {
            #expect(seen.helper == Scheduling(policy: Int32(SCHED_FIFO), priority: 10))
        } else {
            #expect(seen.helper.policy == Int32(SCHED_OTHER))
        }
    }

    /// A thread says whether it got the real-time priority it asked for, as the process may
    /// have it or not; one that did not ask says nothing.
    @Test func aThreadSaysWhetherItRunsInRealTime() throws {
        let allowed = try Self.mayRunInRealTime()
        let asking = try JoinableThread(name: "asking", realtime: true) {}
        asking.join()
        #expect(asking.runsInRealTime == allowed)
        let plain = try JoinableThread(name: "plain") {}
        plain.join()
        #expect(plain.runsInRealTime == nil)
    }
}
