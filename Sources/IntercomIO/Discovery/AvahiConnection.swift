import CAvahi

/// The Avahi client over its whole life: connects, follows the daemon's state, starts the
/// browser and the publisher when the daemon runs, and reconnects by itself after the
/// daemon (or the D-Bus system bus) goes away. Runs on the discovery thread only, except
/// `start` and `close`, which run while the event loop is stopped.
final class AvahiConnection {
    /// How long to wait before trying again when the D-Bus system bus cannot be reached.
    /// (A client that reached the bus waits for the daemon by itself: AVAHI_CLIENT_NO_FAIL.)
    static let retryMilliseconds: UInt32 = 2_000

    private let api: UnsafePointer<AvahiPoll>
    private let state: DiscoveryState
    private let browser: AvahiPeerBrowser
    private let publisher: AvahiServicePublisher?
    private var client: OpaquePointer?
    private lazy var connectTimer = AvahiTimer(api: api) { [unowned self] in self.connect() }
    /// nil until the first verdict; each change is reported once.
    private var isDaemonAvailable: Bool?

    init(api: UnsafePointer<AvahiPoll>, state: DiscoveryState, announcement: ServiceAnnouncement?) {
        self.api = api
        self.state = state
        browser = AvahiPeerBrowser(api: api, state: state)
        publisher = announcement.map { AvahiServicePublisher(announcement: $0, state: state) }
    }

    /// Connects as soon as the event loop runs, so that every report comes from its thread.
    func start() {
        connectTimer.schedule(afterMilliseconds: 0)
    }

    /// Frees the client (and with it the browser, resolvers and entry group, whose service
    /// the daemon then withdraws with an mDNS goodbye) and the timer.
    func close() {
        connectTimer.cancel()
        browser.close()
        if let client { avahi_client_free(client) }
        client = nil
    }

    private func connect() {
        if let client {
            avahi_client_free(client)
            self.client = nil
        }
        var error: Int32 = 0
        // The callback runs already inside avahi_client_new, before `client` is set; it
        // uses the client it is given.
        client = avahi_client_new(api, AVAHI_CLIENT_NO_FAIL, { client, clientState, userdata in
            Unmanaged<AvahiConnection>.fromOpaque(userdata!).takeUnretainedValue().clientChanged(client!, clientState)
        }, Unmanaged.passUnretained(self).toOpaque(), &error)
        if client == nil {
            daemonUnavailable(.daemonUnreachable(AvahiError(code: error)))
            connectTimer.schedule(afterMilliseconds: Self.retryMilliseconds)
        }
    }

    private func clientChanged(_ client: OpaquePointer, _ clientState: AvahiClientState) {
        switch clientState {
        case AVAHI_CLIENT_S_RUNNING:
            daemonAvailable()
            browser.start(on: client)
            publisher?.publish(on: client)
        case AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION:
            // The daemon is (re)claiming its host name; our service waits for S_RUNNING.
            daemonAvailable()
            browser.start(on: client)
            publisher?.withdraw()
        case AVAHI_CLIENT_CONNECTING:
            daemonUnavailable(.daemonNotRunning(AvahiError(code: Int32(AVAHI_ERR_NO_DAEMON))))
        case AVAHI_CLIENT_FAILURE:
            let error = AvahiError(code: avahi_client_errno(client))
            browser.connectionLost()
            publisher?.connectionLost()
            // A client must not be freed inside its own callback: the timer frees it and
            // connects anew, at once when the daemon merely went away (the new client then
            // waits for it), later when something worse happened.
            if error.code == AVAHI_ERR_DISCONNECTED {
                connectTimer.schedule(afterMilliseconds: 0)
            } else {
                daemonUnavailable(.daemonUnreachable(error))
                connectTimer.schedule(afterMilliseconds: Self.retryMilliseconds)
            }
        default:
            break
        }
    }

    private func daemonAvailable() {
        guard isDaemonAvailable != true else { return }
        isDaemonAvailable = true
        state.report(.daemonAvailable)
    }

    private func daemonUnavailable(_ error: DiscoveryError) {
        guard isDaemonAvailable != false else { return }
        isDaemonAvailable = false
        state.report(.daemonUnavailable(error))
    }
}
