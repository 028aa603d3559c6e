import CGPIOD
import Glibc

/// A GPIO line of a real chip, through libgpiod: a talk button (input, pulled up, usually
/// active-low: the button shorts the line to ground) or a lamp (output).
public final class ChipGPIOLine: GPIOLine {
    public let address: GPIOLineAddress
    private let chip: OpaquePointer
    private let line: OpaquePointer
    private let isOutput: Bool

    public enum Direction: Sendable {
        case input(activeLow: Bool)
        case output
    }

    public init(_ address: GPIOLineAddress, direction: Direction, consumer: String = "intercom") throws(GPIOError) {
        self.address = address
        guard let chip = gpiod_chip_open_lookup(address.chip) else {
            throw GPIOError(address: address, operation: "open the chip", code: errno)
        }
        guard let line = gpiod_chip_get_line(chip, address.offset) else {
            let code = errno
            gpiod_chip_close(chip)
            throw GPIOError(address: address, operation: "find the line", code: code)
        }
        let result: Int32
        switch direction {
        case .input(let activeLow):
            let flags = INTERCOM_GPIOD_FLAG_BIAS_PULL_UP | (activeLow ? INTERCOM_GPIOD_FLAG_ACTIVE_LOW : 0)
            result = gpiod_line_request_input_flags(line, consumer, flags)
            isOutput = false
        case .output:
            result = gpiod_line_request_output(line, consumer, 0)
            isOutput = true
        }
        guard result == 0 else {
            let code = errno
            gpiod_chip_close(chip)
            throw GPIOError(address: address, operation: "request the line", code: code)
        }
        self.chip = chip
        self.line = line
    }

    deinit {
        if isOutput { gpiod_line_set_value(line, 0) }
        gpiod_line_release(line)
        gpiod_chip_close(chip)
    }

    public func read() -> Bool { gpiod_line_get_value(line) == 1 }

    public func write(_ on: Bool) {
        guard isOutput else { return }
        gpiod_line_set_value(line, on ? 1 : 0)
    }
}

public struct GPIOError: Error, CustomStringConvertible {
    public let address: GPIOLineAddress
    public let operation: String
    public let code: Int32
    public var description: String { "GPIO \(address): cannot \(operation): \(String(cString: strerror(code)))" }
}
