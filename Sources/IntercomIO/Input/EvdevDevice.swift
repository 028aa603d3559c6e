import Glibc
import IntercomCore

/// A Linux input device (`/dev/input/eventN`) read without blocking: a keyboard, a USB foot
/// switch, a GPIO button exposed by gpio-keys. Works with no terminal at all.
public final class EvdevDevice {
    public let path: String
    private let descriptor: Int32

    public init(path: String) throws(InputDeviceError) {
        self.path = path
        descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            let hint = code == EACCES ? " (add the user to the 'input' group)" : ""
            throw InputDeviceError(path: path, reason: String(cString: strerror(code)) + hint)
        }
    }

    deinit { close(descriptor) }

    /// Whatever events are waiting; empty when none are.
    public func readAvailable() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: EvdevKeyEvents.eventSize * 64)
        let count = read(descriptor, &buffer, buffer.count)
        return count > 0 ? Array(buffer.prefix(count)) : []
    }
}

public struct InputDeviceError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "\(path): \(reason)" }
}
