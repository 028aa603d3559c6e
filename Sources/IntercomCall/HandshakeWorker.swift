import Dispatch
import Glibc
import IntercomCore
import IntercomIO
import IntercomSecurity
import Logging
import Synchronization

/// What makes a call private: this device's identity and the devices it trusts.
public struct CallSecurity: Sendable {
    public var identity: DeviceIdentity
    public var trustedDevices: TrustedDeviceStore
    /// How often the initiator of a session renews its keys (forward secrecy within a call).
    public var rekeyInterval: Duration = .seconds(120)

    public init(identity: DeviceIdentity, trustedDevices: TrustedDeviceStore) {
        self.identity = identity
        self.trustedDevices = trustedDevices
    }
}

/// The thread a call's encryption needs for what must not run on the network thread: the
/// handshakes' Diffie–Hellman work (`SessionSecurity` hands it out, the results go back to it
/// through two rings) and reading the trusted list when its file changes (a `pair` or
/// `unpair` in another process takes effect within a second). An ordinary thread, never
/// real-time; it also writes the log lines the network thread may not.
final class HandshakeWorker {
    typealias Channel = SecureChannel<SocketAddress>
    private let store: TrustedDeviceStore
    /// The trusted list as this thread last read it, for every other part of the call.
    let trustedList: TrustedList
    /// How often the thread looks whether the trusted list changed (unpairing drops a device within 2 s).
    private static let trustCheckInterval: Duration = .seconds(1)

    private let work = SPSCRing<Channel.Work>(capacity: 64)
    private let results = SPSCRing<Channel.WorkResult>(capacity: 64)
    /// The paired devices by key, as the list changes.
    private let trustUpdates = SPSCRing<[DeviceKey: TrustedPeer]>(capacity: 4)
    /// Set when the trusted list is known to have changed (the status screen's volume keys):
    /// the thread reads it at once rather than at its next look.
    private let trustedListChanged = SharedFlag()
    /// Frames of another protocol version, for the thread to log.
    private let versionNotices = SPSCRing<Channel.VersionNotice>(capacity: 4)
    private let logger: Logger
    private let workArrived = DispatchSemaphore(value: 0)
    private let stopping = SharedFlag()
    private var worker: JoinableThread?
    private let wakeNetwork: @Sendable () -> Void

    /// Reads the trusted list once now (a list that cannot be read trusts nobody but ourselves).
    init(store: TrustedDeviceStore, logger: Logger, wakeNetwork: @escaping @Sendable () -> Void) {
        self.store = store
        self.logger = logger
        self.wakeNetwork = wakeNetwork
        trustedList = TrustedList(pairedDevices((try? store.load()) ?? []))
    }

    deinit { stop() }

    func start() throws {
        let (work, results, trustUpdates, workArrived, stopping, wakeNetwork, store, trustedList) =
            (work, results, trustUpdates, workArrived, stopping, wakeNetwork, store, trustedList)
        let versionNotices = versionNotices
        let trustedListChanged = trustedListChanged
        let logger = logger
        let trustCheckInterval = MediaTime.nanoseconds(Self.trustCheckInterval)
        worker = try JoinableThread(name: "handshakes") {
            var stamp = store.stamp()
            var nextTrustCheck = SystemClock.monotonicNanoseconds()
            while !stopping.value.load(ordering: .relaxed) {
                _ = workArrived.wait(timeout: .now() + .milliseconds(250))
                while let item = work.pop() {
                    let result = Channel.perform(item)
                    // The network thread drains results every turn; wait for room rather than lose one.
                    while !results.push(result), !stopping.value.load(ordering: .relaxed) { usleep(1_000) }
                    wakeNetwork()
                }
                while let notice = versionNotices.pop() { logVersionNotice(notice, logger) }
                let now = SystemClock.monotonicNanoseconds()
                let told = trustedListChanged.value.exchange(false, ordering: .relaxed)
                guard now >= nextTrustCheck || told else { continue }
                nextTrustCheck = now + trustCheckInterval
                let current = store.stamp()
                // (A change within the file system's timestamp resolution keeps the stamp: told, it is read anyway.)
                guard current != stamp || told else { continue }
                // A list that cannot be read trusts nobody but ourselves until it can.
                let paired = pairedDevices((try? store.load()) ?? [])
                if trustUpdates.push(paired) {
                    stamp = current
                    wakeNetwork()
                    trustedList.publish(paired)
                } else if told {
                    trustedListChanged.value.store(true, ordering: .relaxed)
                }
            }
        }
    }

    /// Has the thread read the trusted list now (from any thread).
    func readTrustedListNow() {
        trustedListChanged.value.store(true, ordering: .relaxed)
        workArrived.signal()
    }

    func stop() {
        stopping.value.store(true, ordering: .relaxed)
        workArrived.signal()
        worker?.join()
        worker = nil
    }

    /// From the network thread: false when there is no room.
    func submit(_ item: Channel.Work) -> Bool {
        guard work.push(item) else { return false }
        workArrived.signal()
        return true
    }

    /// From the network thread: a frame of another version to log (dropped when the thread has enough).
    func post(_ notice: Channel.VersionNotice) {
        if versionNotices.push(notice) { workArrived.signal() }
    }

    /// From the network thread: a finished step, and a changed trusted list.
    func takeResult() -> Channel.WorkResult? { results.pop() }
    func takeTrustUpdate() -> [DeviceKey: TrustedPeer]? { trustUpdates.pop() }
}

/// The paired devices as the call knows them: read by one watcher (the handshake thread, when
/// the list's file changes) and published to every part of the call that needs them. The
/// network thread, which may not lock, gets them through a ring of its own instead.
final class TrustedList: Sendable {
    private let state: Mutex<(paired: [DeviceKey: TrustedPeer], observers: [@Sendable () -> Void])>

    init(_ paired: [DeviceKey: TrustedPeer]) {
        state = Mutex((paired, []))
    }

    /// The paired devices by key, as last read.
    var paired: [DeviceKey: TrustedPeer] { state.withLock { $0.paired } }

    /// Calls `observer` (on the watcher's thread) each time the list changes.
    func observe(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    func publish(_ paired: [DeviceKey: TrustedPeer]) {
        let observers = state.withLock { state in
            state.paired = paired
            return state.observers
        }
        for observer in observers { observer() }
    }
}

/// Each paired device by its key.
func pairedDevices(_ devices: [TrustedDevice]) -> [DeviceKey: TrustedPeer] {
    Dictionary(devices.compactMap { device in
        device.keyBytes.map { (DeviceKey($0), TrustedPeer(name: TerminalText.sanitized(device.name), listening: device.listening)) }
    }, uniquingKeysWith: { first, _ in first })
}

/// Why a peer of another build never joins. Only numbers are printed (the address and the
/// version byte): nothing the sender chose as text reaches the log.
func logVersionNotice(_ notice: SecureChannel<SocketAddress>.VersionNotice, _ logger: Logger) {
    logger.warning("""
        peer \(notice.address) speaks protocol version \(notice.version), this build speaks \(SecureDatagram.version): \
        update one of them (they cannot call each other)
        """)
}

/// The `security` object of `--stats-json` and `intercom status --json`.
public struct SecurityStatistics: Codable, Sendable, Equatable {
    public var encrypted: Bool
    /// Packets dropped because they were not authentic: a bad tag, no session, or sent in the clear.
    public var authFailPackets = 0
    public var replayPackets = 0
    /// Handshakes refused because they came faster than the budget allows.
    public var rateLimited = 0
    public var rekeys = 0
    public var handshakes = 0
    /// Handshakes that finished with a device that is not paired.
    public var untrustedHandshakes = 0
    public var badHandshakes = 0
    public var roams = 0
    /// Initiations over the handshake budget answered with a cookie (a stranger's flood, or load).
    public var cookieReplies = 0
    /// Frames of another protocol version (a peer running an older or newer build), dropped.
    public var otherVersionPackets = 0
    /// RTP packets not sent to a peer because its session was not up yet (the call's start).
    public var unsentNoSession = 0
    /// This device's fingerprint.
    public var fingerprint: String?

    public static let unencrypted = SecurityStatistics(encrypted: false)
}
