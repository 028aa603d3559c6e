import CAvahi
import IntercomCore
import Synchronization

/// Finds intercom peers on the LAN by mDNS/DNS-SD, and optionally announces this one,
/// through avahi-daemon (libavahi-client).
///
/// Discovery runs on its own thread (Avahi's threaded event loop), never on Swift
/// concurrency. It starts at once and keeps going whatever the daemon does: when
/// avahi-daemon is missing it reports `.daemonUnavailable` once and waits; when the daemon
/// starts or restarts it reconnects, browses and publishes again by itself.
///
/// `@unchecked` for Avahi's objects (the poll, and the connection's client and browsers):
/// after `init` only the discovery thread touches them, until `stop()` has stopped and joined
/// that thread (`avahi_threaded_poll_stop`); what other threads read is `state`, behind locks.
public final class ServiceDiscovery: @unchecked Sendable {
    /// Receives every event, on the discovery thread, one at a time. It must return quickly
    /// and must not call `stop()` (which waits for that thread).
    public typealias EventHandler = @Sendable (DiscoveryEvent) -> Void

    private let poll: OpaquePointer
    private let connection: AvahiConnection
    private let state: DiscoveryState
    private let stopped = Mutex(false)

    /// Starts discovery.
    ///
    /// - Parameters:
    ///   - announcement: our service, or nil to browse only.
    ///   - ownPeerID: services with this TXT `id` are ours and never reported; defaults to
    ///     the announcement's peer id.
    ///   - onEvent: called on the discovery thread for every event.
    /// - Throws: `DiscoveryError.eventLoopFailed` when the thread cannot be started. A
    ///   missing daemon is not an error here: it arrives as an event.
    public init(
        announcing announcement: ServiceAnnouncement?,
        ownPeerID: PeerID? = nil,
        onEvent: @escaping EventHandler = { _ in }
    ) throws(DiscoveryError) {
        guard let poll = avahi_threaded_poll_new() else { throw .eventLoopFailed("avahi_threaded_poll_new failed") }
        self.poll = poll
        state = DiscoveryState(
            table: DiscoveredPeerTable(ownPeerID: ownPeerID ?? announcement?.peerID),
            startedAtNanoseconds: SystemClock.monotonicNanoseconds(),
            handler: onEvent
        )
        connection = AvahiConnection(api: avahi_threaded_poll_get(poll), state: state, announcement: announcement)
        connection.start()
        guard avahi_threaded_poll_start(poll) >= 0 else {
            stopped.withLock { $0 = true }
            connection.close()
            avahi_threaded_poll_free(poll)
            throw .eventLoopFailed("could not start the discovery thread")
        }
    }

    deinit { stop() }

    /// The peers found so far and not gone, by service name. Safe from any thread.
    public var peers: [DiscoveredPeer] { state.peers }

    /// Monotonic nanoseconds when discovery started.
    public var startedAtNanoseconds: UInt64 { state.startedAtNanoseconds }

    /// Nanoseconds from the start to the first peer's appearance; nil before any.
    public var nanosecondsToFirstPeer: UInt64? {
        state.firstPeerAt.map { $0 > startedAtNanoseconds ? $0 - startedAtNanoseconds : 0 }
    }

    /// Stops the discovery thread and waits for it, then frees every Avahi object: our
    /// service is withdrawn (the daemon sends a goodbye). Safe to call more than once; not
    /// from the event handler.
    public func stop() {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        avahi_threaded_poll_stop(poll)
        connection.close()
        avahi_threaded_poll_free(poll)
    }
}
