import Glibc

/// How much quieter the other streams play while a page plays (a chime, an announcement):
/// down by `depthDecibels` within `attackNanoseconds` of the page's first sound, held while it
/// sounds (and `holdNanoseconds` after, over a pause between its words), and back within
/// `holdNanoseconds + releaseNanoseconds` of its last sound. The gain moves in a straight
/// line in decibels from period to period (and in gain across each, in the mixer), so that
/// neither edge clicks. Pure: the mixer passes whether a page sounded in each period.
public struct PageDucking: Sendable {
    public let depthDecibels: Double
    public let attackNanoseconds: UInt64
    public let holdNanoseconds: UInt64
    public let releaseNanoseconds: UInt64
    private let sampleRate: Int
    /// How far down the others are now, 0 (as they are) to `depthDecibels`.
    private var decibelsDown = 0.0
    private var lastPageSound: UInt64?

    public init(
        depthDecibels: Double = 15, attack: Duration = .milliseconds(20), hold: Duration = .milliseconds(60),
        release: Duration = .milliseconds(200), sampleRate: Int = VoiceFormat.sampleRate
    ) {
        self.depthDecibels = max(0, depthDecibels)
        attackNanoseconds = UInt64(MediaTime.nanoseconds(attack))
        holdNanoseconds = UInt64(MediaTime.nanoseconds(hold))
        releaseNanoseconds = UInt64(MediaTime.nanoseconds(release))
        self.sampleRate = sampleRate
    }

    /// The gains of the other streams for a period of `samples` starting at `now`, at its
    /// first sample and at its last, and whether a page sounded in it; the gain goes from one
    /// to the other in a straight line in decibels.
    public mutating func advance(pageSounded: Bool, samples: Int, now: UInt64) -> (first: Float, last: Float) {
        if pageSounded { lastPageSound = now }
        let first = decibelsDown
        let periodNanoseconds = Double(samples) * 1e9 / Double(sampleRate)
        let paging = lastPageSound.map { now &- $0 <= holdNanoseconds } ?? false
        if paging {
            decibelsDown = min(depthDecibels, decibelsDown + depthDecibels * periodNanoseconds / Double(max(1, attackNanoseconds)))
        } else {
            decibelsDown = max(0, decibelsDown - depthDecibels * periodNanoseconds / Double(max(1, releaseNanoseconds)))
        }
        return (Self.gain(decibelsDown: first), Self.gain(decibelsDown: decibelsDown))
    }

    public static func gain(decibelsDown: Double) -> Float {
        Float(pow(10, -decibelsDown / 20))
    }
}
