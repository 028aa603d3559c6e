import Glibc
import IntercomIO
import Testing

@Suite("Poller")
struct PollerTests {
    static func elapsedNanoseconds(since start: ContinuousClock.Instant) -> UInt64 {
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    @Test func timesOut() throws {
        let poller = try Poller(watching: [try UDPSocket()])
        let start = ContinuousClock.now
        let result = try poller.wait(timeoutNanoseconds: 30_000_000)
        #expect(result.timedOut)
        #expect(Self.elapsedNanoseconds(since: start) >= 30_000_000)
    }

    @Test func reportsWhichSocketIsReadable() throws {
        let quiet = try UDPSocket()
        let busy = try UDPSocket()
        let poller = try Poller(watching: [quiet, busy])
        try quiet.send([1], to: .loopbackIPv4(port: busy.localPort))
        let result = try poller.wait(timeoutNanoseconds: 2_000_000_000)
        #expect(result.readableSockets == 0b10 && !result.wasWoken)
        #expect(!result.isReadable(0) && result.isReadable(1))
    }

    @Test func wakesFromAnotherThread() throws {
        let poller = try Poller(watching: [try UDPSocket()])
        let start = ContinuousClock.now
        let waker = try JoinableThread(name: "waker") {
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
            nanosleep(&pause, nil)
            poller.wake()
        }
        let result = try poller.wait(timeoutNanoseconds: 10_000_000_000)
        waker.join()
        #expect(result.wasWoken)
        #expect(Self.elapsedNanoseconds(since: start) < 5_000_000_000)
        // The wakeup was consumed: the next wait times out.
        #expect(try poller.wait(timeoutNanoseconds: 1_000_000).timedOut)
    }

    @Test func aWakeBeforeTheWaitIsNotLost() throws {
        let poller = try Poller(watching: [])
        poller.wake()
        poller.wake()
        #expect(try poller.wait(timeoutNanoseconds: 2_000_000_000).wasWoken)
        #expect(try poller.wait(timeoutNanoseconds: 0).timedOut)
    }
}
