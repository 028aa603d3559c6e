/// When a peer transmits.
public enum TalkMode: String, CaseIterable, Sendable, Codable {
    /// While the talk key or button is held.
    case ptt
    /// While the voice activity detector hears speech, plus a short hang-over.
    case vox
    /// Always.
    case open
}
