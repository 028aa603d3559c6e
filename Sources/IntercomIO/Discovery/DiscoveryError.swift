import CAvahi

/// An error code of the Avahi client library with its own message (`avahi_strerror`).
public struct AvahiError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One of the negative `AVAHI_ERR_…` codes.
    public let code: Int32
    /// The library's text for `code`, such as "Daemon not running".
    public let message: String

    /// The error for an `AVAHI_ERR_…` code, with avahi_strerror's text.
    public init(code: Int32) {
        self.code = code
        message = String(cString: avahi_strerror(code))
    }

    public var description: String { "\(message) (avahi error \(code))" }
}

/// Why discovery could not do what it was asked.
public enum DiscoveryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The D-Bus system bus works but avahi-daemon is not on it. Discovery waits for the
    /// daemon and reconnects by itself.
    case daemonNotRunning(AvahiError)
    /// The D-Bus system bus that leads to avahi-daemon cannot be reached, or the connection
    /// failed. Discovery tries again every few seconds.
    case daemonUnreachable(AvahiError)
    /// The daemon refused or dropped our service.
    case publishingFailed(serviceName: String, AvahiError)
    /// The daemon could not browse for peers.
    case browsingFailed(AvahiError)
    /// The announcement cannot be published as given: the reason says which part.
    case invalidAnnouncement(String)
    /// The discovery thread or its event loop could not be set up.
    case eventLoopFailed(String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let error):
            "mDNS discovery is unavailable: avahi-daemon is not running (\(error.message))"
        case .daemonUnreachable(let error):
            "mDNS discovery is unavailable: cannot reach avahi-daemon over the D-Bus system bus (\(error.message))"
        case .publishingFailed(let serviceName, let error):
            "could not publish '\(serviceName)' by mDNS: \(error.message)"
        case .browsingFailed(let error):
            "could not browse for peers by mDNS: \(error.message)"
        case .invalidAnnouncement(let reason):
            "cannot announce this service: \(reason)"
        case .eventLoopFailed(let reason):
            "could not start mDNS discovery: \(reason)"
        }
    }
}
