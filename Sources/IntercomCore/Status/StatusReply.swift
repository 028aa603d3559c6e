/// A running intercom's answer to a `StatusRequest` other than `status` (which the call's
/// figures answer, `StatusReport`): typed both ways, so that no client reads free text back.
/// On the socket it is one JSON object on one line (`StatusReplyLine` in IntercomCall).
/// Every text in it is made safe to print by whoever made it.
public enum StatusReply: Codable, Equatable, Sendable {
    /// Refused, or failed. `later`: nothing wrong with the request, but nobody to hear it or
    /// another run under way: worth trying again.
    case refused(reason: String, later: Bool)
    /// A pairing began: with the code to give the other device, or (nil) looking for the
    /// device that printed the code given.
    case pairingStarted(code: String?)
    case pairingRunning
    case paired(name: String, fingerprint: String)
    case pairingWrongCode
    case pairingTimedOut
    case unpaired(name: String, fingerprint: String)
    /// How loud a paired device plays now.
    case listening(name: String, fingerprint: String, volumePercent: Int, muted: Bool)
    /// A page began: to this many devices of `target`, lasting `seconds`.
    case paging(devices: Int, seconds: Double, target: String)
    case pagePlaying
    case paged(devices: Int, target: String)

    /// A refusal of the request itself (not a reply to a request understood).
    public init(_ error: StatusRequestError) {
        self = .refused(reason: error.reason, later: false)
    }

    /// What `intercom volume`, `mute` and `unmute` print of a `listening` reply.
    public static func listeningDescription(name: String, fingerprint: String, volumePercent: Int, muted: Bool) -> String {
        "\(name) (\(fingerprint)): volume \(volumePercent) %\(muted ? ", muted" : "")"
    }
}
