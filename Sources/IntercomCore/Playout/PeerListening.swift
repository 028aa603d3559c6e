/// How loud a paired device plays here, remembered with it in the trusted list: what
/// `intercom volume`, `intercom mute` and the status screen's volume keys set.
public struct PeerListening: Equatable, Sendable {
    /// Percent of the level it was sent at.
    public private(set) var volumePercent: Int
    /// Heard not at all, whatever the volume (which is kept for when it is unmuted).
    public var muted: Bool

    /// From silent to four times as loud as sent: the mixer's limiter keeps a loud stream from
    /// clipping, and more would only bring up the sender's noise.
    public static let volumeRange = 0...400
    public static let asSent = PeerListening(volumePercent: 100, muted: false)

    /// `volumePercent` is clamped to `volumeRange`.
    public init(volumePercent: Int, muted: Bool) {
        self.volumePercent = min(Self.volumeRange.upperBound, max(Self.volumeRange.lowerBound, volumePercent))
        self.muted = muted
    }

    /// The gain the mixer plays the device's stream with.
    public var gain: Float { muted ? 0 : Float(volumePercent) / 100 }

    /// One press of a volume key: a quarter louder, or a fifth quieter, so that up and down
    /// undo each other; never quite silent (that is what mute is for), and not stuck at 0 %.
    public func stepped(louder: Bool) -> PeerListening {
        let base = max(volumePercent, 5)
        let next = louder ? (base * 5 + 2) / 4 : (base * 4 + 2) / 5
        return PeerListening(volumePercent: max(5, next), muted: muted)
    }
}
