import Glibc

extension SocketAddress {
    /// Parses `HOST:PORT` or `[IPV6]:PORT`, resolving host names through getaddrinfo.
    ///
    /// Resolving a name may block on DNS; numeric addresses never do.
    ///
    /// - Parameters:
    ///   - text: the user's input.
    ///   - label: what the input was, for the error message: `"--peer"` gives "bad --peer 'x': …".
    public static func parse(_ text: String, label: String = "address") throws(SocketAddressError) -> SocketAddress {
        func failure(_ reason: SocketAddressError.Reason) -> SocketAddressError {
            SocketAddressError(input: text, label: label, reason: reason)
        }

        let host: String
        let portText: String
        let isBracketed = text.hasPrefix("[")
        if isBracketed {
            guard let close = text.firstIndex(of: "]") else { throw failure(.unclosedBracket) }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw failure(.missingPort) }
            portText = String(rest.dropFirst())
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw failure(.missingPort) }
            host = String(text[..<colon])
            portText = String(text[text.index(after: colon)...])
            guard !host.contains(":") else { throw failure(.unbracketedIPv6) }
        }
        guard !host.isEmpty else { throw failure(.missingHost) }
        guard let port = UInt16(portText), port != 0 else { throw failure(.badPort(portText)) }

        var hints = addrinfo()
        hints.ai_family = isBracketed ? AF_INET6 : AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (isBracketed ? AI_NUMERICHOST : 0)
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, portText, &hints, &results)
        defer { if let results { freeaddrinfo(results) } }
        guard status == 0 else {
            if isBracketed { throw failure(.notIPv6Literal) }
            let message = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw failure(.unresolvable(message))
        }

        var entry = results
        while let current = entry {
            if let address = current.pointee.ai_addr, let found = Self(address, length: current.pointee.ai_addrlen) {
                return found
            }
            entry = current.pointee.ai_next
        }
        throw failure(.unresolvable("no IPv4 or IPv6 address"))
    }

    private init?(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(
                start: address, count: min(Int(length), MemoryLayout<sockaddr_storage>.size)))
        }
        self.init(storage: storage)
    }
}

/// Why text is not a usable socket address, naming the input.
public struct SocketAddressError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        case missingPort
        case missingHost
        case badPort(String)
        case unbracketedIPv6
        case unclosedBracket
        case notIPv6Literal
        case unresolvable(String)
    }

    /// The text as the user gave it.
    public let input: String
    /// What the text was, such as `--peer`.
    public let label: String
    public let reason: Reason

    public var description: String {
        let expected = "expected HOST:PORT or [IPV6]:PORT"
        let explanation = switch reason {
        case .missingPort: "no port; \(expected)"
        case .missingHost: "no host; \(expected)"
        case .badPort(let port): "port '\(port)' is not a number from 1 to 65535"
        case .unbracketedIPv6: "an IPv6 address needs brackets, as in [::1]:5004"
        case .unclosedBracket: "'[' has no matching ']'; \(expected)"
        case .notIPv6Literal: "only a numeric IPv6 address may stand in brackets"
        case .unresolvable(let message): "cannot resolve the host: \(message)"
        }
        return "bad \(label) '\(input)': \(explanation)"
    }
}
