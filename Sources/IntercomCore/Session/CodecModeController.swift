import Synchronization

/// How the send path encodes: the frame length and Opus mode, chosen for the link.
public enum CodecMode: String, Sendable, Codable {
    /// 5 ms CELT frames with Opus's restricted low-delay application (2.5 ms of lookahead):
    /// the least delay, no in-band FEC. For a clean link, while someone speaks.
    case lowDelay = "low-delay"
    /// 10 ms SILK or hybrid frames with in-band FEC sized to the reported loss, and DTX in
    /// silence: for a link that loses or delays packets, and for silence on any link.
    case robust
    /// One encoder with the frame length the user chose (`--frame-ms`): no adapting.
    case fixed

    /// For the status screen.
    public var description: String {
        switch self {
        case .lowDelay: "low delay (5 ms)"
        case .robust: "robust (10 ms)"
        case .fixed: "fixed"
        }
    }

}

/// Held in an `Atomic`: the capture thread stores it every frame, the status reads it.
extension CodecMode: AtomicCase {
    public static let atomicOrder: [CodecMode] = [.lowDelay, .robust, .fixed]
}

/// Chooses between the low-delay and the robust encoder, frame by frame (pure: the reports,
/// the voice activity and the time are passed in).
///
/// The link is taken as clean until a first report says how it is (the receiver sends its
/// first a quarter of a second after it hears a new stream, `CallSession.firstReportDelay`):
/// the first word of a call is then coded as every later one on a clean link, rather than
/// robustly and 10 ms later (a LAN link is clean far more often than not, and a troubled one
/// is known as such within that quarter of a second and a round trip). It is
/// in trouble from a receiver report of any loss, or of jitter above
/// `jitterLimit`, and clean again from the first report without either that comes at least
/// `cleanHold` after the last troubled one (not its echo from the same moment): reports come
/// every second and the first after the link became clean may still count loss from before,
/// so the low-delay path is back within about 2 s of the link becoming clean. Low delay is used only while voice
/// was heard within `speechHold`: in silence the robust encoder's DTX sends almost nothing,
/// where CELT would send every 5 ms frame. Nor while the stream goes to more devices than
/// `ListenerBudget` allows low delay for: each copy's packets cost airtime of their own.
public struct CodecModeController: Sendable {
    public let jitterLimitMilliseconds: Double
    public let cleanHold: UInt64
    public let speechHold: UInt64
    public private(set) var linkIsClean = true
    /// Whether as few devices hear the stream as low-delay frames may go to.
    public var fewListeners = true
    private var lastTrouble: UInt64?
    private var lastSpeech: UInt64?

    public init(
        jitterLimitMilliseconds: Double = 10, cleanHold: UInt64 = MediaTime.nanoseconds(.milliseconds(500)), speechHold: UInt64 = MediaTime.nanoseconds(.milliseconds(300))
    ) {
        self.jitterLimitMilliseconds = jitterLimitMilliseconds
        self.cleanHold = cleanHold
        self.speechHold = speechHold
    }

    /// The worst loss (0…1) and interarrival jitter a peer reported for our stream.
    public mutating func reported(fractionLost: Double, jitterMilliseconds: Double, now: UInt64) {
        if fractionLost > 0 || jitterMilliseconds > jitterLimitMilliseconds {
            linkIsClean = false
            lastTrouble = now
        } else if lastTrouble.map({ now >= $0 + cleanHold }) ?? true {
            linkIsClean = true
        }
    }

    /// Whether the frame captured at `now` held voice.
    public mutating func heard(speech: Bool, now: UInt64) {
        if speech { lastSpeech = now }
    }

    public func mode(now: UInt64) -> CodecMode {
        guard linkIsClean, fewListeners, let lastSpeech, now < lastSpeech + speechHold else { return .robust }
        return .lowDelay
    }
}
