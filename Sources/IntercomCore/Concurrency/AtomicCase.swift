import Synchronization

/// An enumeration held in an `Atomic` as its place in `atomicOrder`, so that one thread can set
/// a state (a talk mode, a codec mode) that a real-time thread reads without a lock.
public protocol AtomicCase: AtomicRepresentable, Equatable where AtomicRepresentation == UInt8.AtomicRepresentation {
    /// Every case, in the order their numbers follow; a number out of range reads as the first.
    static var atomicOrder: [Self] { get }
}

extension AtomicCase {
    public static func encodeAtomicRepresentation(_ value: consuming Self) -> UInt8.AtomicRepresentation {
        let number = atomicOrder.firstIndex(of: value) ?? 0
        return UInt8.encodeAtomicRepresentation(UInt8(truncatingIfNeeded: number))
    }

    public static func decodeAtomicRepresentation(_ storage: consuming UInt8.AtomicRepresentation) -> Self {
        let number = Int(UInt8.decodeAtomicRepresentation(storage))
        return atomicOrder.indices.contains(number) ? atomicOrder[number] : atomicOrder[0]
    }
}
