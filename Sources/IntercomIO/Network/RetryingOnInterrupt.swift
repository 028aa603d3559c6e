import Glibc
import SystemPackage

/// Runs a system call that reports failure as -1 and `errno`, again for as long as a signal
/// interrupts it. The network layer handles EINTR here and nowhere else.
func retryingOnInterrupt<Value: FixedWidthInteger>(_ systemCall: () -> Value) -> Result<Value, Errno> {
    while true {
        let value = systemCall()
        guard value == -1 else { return .success(value) }
        let error = Errno(rawValue: errno)
        guard error == .interrupted else { return .failure(error) }
    }
}
