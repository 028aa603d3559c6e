/// When a peer transmits.
public enum TalkMode: String, CaseIterable, Sendable, Codable {
    /// While the talk key or button is held.
    case ptt
    /// While the voice activity detector hears speech, plus a short hang-over.
    case vox
    /// Always.
    case open
}

import Synchronization

/// Held in an `Atomic` as its index, so that the interface can change the mode of a running
/// call and the capture thread read it every frame without a lock (or an allocation).
extension TalkMode: AtomicRepresentable {
    public typealias AtomicRepresentation = UInt8.AtomicRepresentation

    public static func encodeAtomicRepresentation(_ value: consuming TalkMode) -> AtomicRepresentation {
        let index: UInt8 = switch value {
        case .ptt: 0
        case .vox: 1
        case .open: 2
        }
        return UInt8.encodeAtomicRepresentation(index)
    }

    public static func decodeAtomicRepresentation(_ storage: consuming AtomicRepresentation) -> TalkMode {
        switch UInt8.decodeAtomicRepresentation(storage) {
        case 0: .ptt
        case 1: .vox
        default: .open
        }
    }
}
