import CGPIOD
import Glibc

/// A GPIO line of a real chip, through libgpiod: a talk button (input, pulled up, usually
/// active-low: the button shorts the line to ground) or a lamp (output).
public final class ChipGPIOLine: GPIOLine {
    public let address: GPIOLineAddress
    private let line: UnsafeMutablePointer<intercom_gpio_line>
    private let isOutput: Bool

    public enum Direction: Sendable {
        case input(activeLow: Bool)
        case output
    }

    /// The chip is a path, a name (gpiochip0), a number or a label, on libgpiod 1 and 2 alike.
    public init(_ address: GPIOLineAddress, direction: Direction, consumer: String = "intercom") throws(GPIOError) {
        self.address = address
        var failed = INTERCOM_GPIO_OPEN_CHIP
        let requested: UnsafeMutablePointer<intercom_gpio_line>?
        switch direction {
        case .input(let activeLow):
            requested = intercom_gpio_request(address.chip, address.offset, false, activeLow, consumer, &failed)
            isOutput = false
        case .output:
            requested = intercom_gpio_request(address.chip, address.offset, true, false, consumer, &failed)
            isOutput = true
        }
        guard let requested else {
            let operation = switch failed {
            case INTERCOM_GPIO_OPEN_CHIP: "open the chip"
            case INTERCOM_GPIO_FIND_LINE: "find the line"
            default: "request the line"
            }
            throw GPIOError(address: address, operation: operation, code: errno)
        }
        line = requested
    }

    deinit {
        if isOutput { intercom_gpio_set(line, false) }
        intercom_gpio_release(line)
    }

    public func read() -> Bool { intercom_gpio_get(line) == 1 }

    public func write(_ on: Bool) {
        guard isOutput else { return }
        intercom_gpio_set(line, on)
    }
}

public struct GPIOError: Error, CustomStringConvertible {
    public let address: GPIOLineAddress
    public let operation: String
    public let code: Int32
    public var description: String { "GPIO \(address): cannot \(operation): \(String(cString: strerror(code)))" }
}
