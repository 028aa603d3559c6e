import Synchronization

/// When a peer transmits.
public enum TalkMode: String, CaseIterable, Sendable, Codable {
    /// While the talk key or button is held.
    case ptt
    /// While the voice activity detector hears speech, plus a short hang-over.
    case vox
    /// Always.
    case open
}

/// Held in an `Atomic`: the interface changes the mode of a running call, the capture thread reads it every frame.
extension TalkMode: AtomicCase {
    public static let atomicOrder: [TalkMode] = [.ptt, .vox, .open]
}
