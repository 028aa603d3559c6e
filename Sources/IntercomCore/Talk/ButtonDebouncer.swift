/// Turns the raw level of a mechanical button, which bounces for a few milliseconds on
/// every press and release, into clean press and release events: a new level counts once
/// it has held for `settleNanoseconds`.
public struct ButtonDebouncer: Sendable {
    public let settleNanoseconds: UInt64
    private var stable = false
    private var candidate = false
    private var candidateSince: UInt64 = 0

    public init(settleNanoseconds: UInt64 = MediaTime.nanoseconds(.milliseconds(20))) {
        self.settleNanoseconds = settleNanoseconds
    }

    /// Feeds the level read at `now` (true = pressed); returns an event when the stable
    /// level changes.
    public mutating func sample(pressed: Bool, now: UInt64) -> PushToTalk.KeyEvent? {
        if pressed != candidate {
            candidate = pressed
            candidateSince = now
        }
        guard candidate != stable, now >= candidateSince, now - candidateSince >= settleNanoseconds else { return nil }
        stable = candidate
        return stable ? .press : .release
    }
}
