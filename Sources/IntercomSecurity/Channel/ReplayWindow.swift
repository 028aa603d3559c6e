/// A sliding window of the packet counters received under one key (as SRTP's and RFC 6479's):
/// a counter is new when it is above the highest seen, or within the window below it and not
/// yet seen. The window only moves when `accept` is called, after the packet's tag verified.
public struct ReplayWindow: Sendable {
    public static let size: UInt64 = 128
    /// One more than the highest counter accepted (0: nothing accepted yet).
    private var end: UInt64 = 0
    /// Bit i of word i / 64 says whether counter `end - 1 - i` was accepted.
    private var seen: (UInt64, UInt64) = (0, 0)

    public init() {}

    public func isFresh(_ counter: UInt64) -> Bool {
        if counter >= end { return counter < .max }
        let age = end - 1 - counter
        guard age < Self.size else { return false }
        return !bit(age)
    }

    /// Whether `counter` is above every counter accepted so far: a replay never is, since the
    /// packet it copies was sealed with a counter below the next one the sender uses.
    public func isNewest(_ counter: UInt64) -> Bool { counter >= end && counter < .max }

    public mutating func accept(_ counter: UInt64) {
        precondition(isFresh(counter))
        if counter >= end {
            shift(by: counter - end + 1)
            end = counter + 1
        }
        setBit(end - 1 - counter)
    }

    private func bit(_ age: UInt64) -> Bool {
        let word = age < 64 ? seen.0 : seen.1
        return word & (1 << (age % 64)) != 0
    }

    private mutating func setBit(_ age: UInt64) {
        if age < 64 { seen.0 |= 1 << age } else { seen.1 |= 1 << (age - 64) }
    }

    private mutating func shift(by distance: UInt64) {
        switch distance {
        case 0: break
        case 1..<64:
            seen.1 = seen.1 << distance | seen.0 >> (64 - distance)
            seen.0 <<= distance
        case 64..<128:
            seen.1 = seen.0 << (distance - 64)
            seen.0 = 0
        default:
            seen = (0, 0)
        }
    }
}
