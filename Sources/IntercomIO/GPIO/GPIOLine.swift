/// One general-purpose I/O line, read as a button or driven as a lamp. The real lines come
/// through libgpiod (`ChipGPIOLine`); tests drive a line of their own behind this
/// interface, since these machines have no GPIO simulator.
public protocol GPIOLine: AnyObject {
    /// The line's logical level (active-low already applied): true = pressed / lit.
    func read() -> Bool
    /// Sets an output line; ignored on an input.
    func write(_ on: Bool)
}

/// Where a line is: `CHIP:OFFSET`, e.g. `gpiochip0:17` or `0:17`.
public struct GPIOLineAddress: Sendable, Equatable, CustomStringConvertible {
    public let chip: String
    public let offset: UInt32

    public init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, !parts[0].isEmpty, let offset = UInt32(parts[1]) else { return nil }
        chip = String(parts[0])
        self.offset = offset
    }

    public var description: String { "\(chip):\(offset)" }
}
