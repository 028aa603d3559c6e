import Foundation

/// Polls `condition` until it holds or `seconds` pass. Returns how long it took, or nil if it
/// never held: the caller judges what it waited for.
public func waitUntil(seconds: Double, every pause: Duration = .milliseconds(50), _ condition: () -> Bool) -> Double? {
    let start = ContinuousClock.now
    let deadline = start + .seconds(seconds)
    while true {
        if condition() { return (ContinuousClock.now - start).seconds }
        guard ContinuousClock.now < deadline else { return nil }
        usleep(UInt32(pause.seconds * 1e6))
    }
}

/// `waitUntil` for async tests, without holding one of the runner's threads.
@discardableResult
public func waitUntil(timeout: Duration = .seconds(10), every pause: Duration = .milliseconds(10), _ condition: () -> Bool) async throws -> Double? {
    let start = ContinuousClock.now
    let deadline = start + timeout
    while true {
        if condition() { return (ContinuousClock.now - start).seconds }
        guard ContinuousClock.now < deadline else { return nil }
        try await Task.sleep(for: pause)
    }
}

/// Waits until something listens on UDP `port`: a process started on a loaded machine may take
/// seconds to get there, and datagrams sent before then are lost. Returns whether it happened
/// within `seconds`.
public func waitForUDPListener(port: Int, seconds: Double = 20) -> Bool {
    waitUntil(seconds: seconds, every: .milliseconds(20)) { isListeningOnUDP(port: port) } != nil
}

/// `waitForUDPListener` for async tests.
public func waitForUDPListeners(ports: [Int], seconds: Double = 20) async throws -> Bool {
    try await waitUntil(timeout: .seconds(seconds), every: .milliseconds(20)) { ports.allSatisfy(isListeningOnUDP(port:)) } != nil
}

extension Duration {
    /// In seconds, as a Double.
    public var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
