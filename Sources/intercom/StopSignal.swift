import Dispatch
import Glibc

/// Blocks until SIGINT or SIGTERM arrives or `seconds` pass (nil: no limit). The two signals
/// are taken over whatever this process inherited: a shell starts background jobs with
/// SIGINT ignored, and the test tools that stop their helpers with SIGINT must still stop them.
func waitForStopSignal(seconds: Double?) {
    let stopRequested = DispatchSemaphore(value: 0)
    let signalSources = [SIGINT, SIGTERM].map { number in
        // Dispatch sees the signal only once its default action (exit) is off.
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { stopRequested.signal() }
        source.resume()
        return source
    }
    defer { signalSources.forEach { $0.cancel() } }
    _ = stopRequested.wait(timeout: seconds.map { .now() + $0 } ?? .distantFuture)
}
