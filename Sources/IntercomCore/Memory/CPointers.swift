/// Buffers handed to C functions without `baseAddress!`, which stops the program on an empty
/// buffer (it has no address). C takes a pointer and a length, and reads nothing at a length
/// of zero, so nil is what an empty buffer passes; functions that write a fixed number of bytes
/// check the buffer's size first.
///
/// Some C parameters are declared non-null (libsodium's keys and outputs): there the buffer's
/// size is checked against the function's before the call, and `nonNullCBytes` says so once,
/// with a message, where a bare `!` would not.
extension UnsafeRawBufferPointer {
    /// The bytes as C's `const unsigned char *`.
    public var cBytes: UnsafePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }

    /// The bytes for a parameter C declares non-null; the caller has checked the buffer's size.
    public var nonNullCBytes: UnsafePointer<UInt8> { nonNull(cBytes) }
}

extension UnsafeMutableRawBufferPointer {
    /// The bytes as C's `unsigned char *`.
    public var cBytes: UnsafeMutablePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }

    /// The bytes for a parameter C declares non-null; the caller has checked the buffer's size.
    public var nonNullCBytes: UnsafeMutablePointer<UInt8> { nonNull(cBytes) }

    /// The address `offset` bytes in (at most the end).
    public func address(at offset: Int) -> UnsafeMutableRawPointer? {
        precondition(offset >= 0 && offset <= count)
        return baseAddress.map { $0 + offset }
    }
}

extension UnsafeBufferPointer {
    /// The first element's address for a parameter C declares non-null; the caller has checked the buffer's size.
    public var nonNullAddress: UnsafePointer<Element> { nonNull(baseAddress) }

    /// The address of the element at `offset` (at most the end).
    public func address(at offset: Int) -> UnsafePointer<Element>? {
        precondition(offset >= 0 && offset <= count)
        return baseAddress.map { $0 + offset }
    }
}

extension UnsafeMutableBufferPointer {
    /// The first element's address for a parameter C declares non-null; the caller has checked the buffer's size.
    public var nonNullAddress: UnsafeMutablePointer<Element> { nonNull(baseAddress) }
}

/// The address of a buffer that must not be empty.
private func nonNull<Pointer>(_ address: Pointer?) -> Pointer {
    guard let address else { preconditionFailure("an empty buffer where C needs an address") }
    return address
}
