import FoundationEssentials
import IntercomCore
import IntercomIO
import IntercomSecurity
import Logging
import Synchronization

/// Pairing on behalf of a running daemon, asked for over its status socket by `intercom pair`
/// (so that a headless device pairs its own identity, not that of whoever typed the command
/// over ssh). One run at a time, on a thread of its own; the daemon's call goes on.
///
/// Requests (`StatusRequest`): `pair` (make a code, wait), `pair CODE` (find a waiting device), `pair result`.
public final class DaemonPairing: Sendable {
    private let identity: DeviceIdentity
    private let store: TrustedDeviceStore
    private let name: String
    private let logger: Logger
    private let state = Mutex<State>(.idle)

    private enum State {
        case idle
        case running(code: String?)
        case finished(PairingSession.Outcome)
        case failed(String)
    }

    public init(security: CallSecurity, name: String, logger: Logger) {
        identity = security.identity
        store = security.trustedDevices
        self.name = name
        self.logger = logger
    }

    /// Starts pairing with the code the other device printed, or makes a code and waits.
    public func start(code: String?) -> StatusReply {
        let printed = code == nil ? makePairingCode() : nil
        let started = state.withLock { state -> Bool in
            if case .running = state { return false }
            state = .running(code: printed)
            return true
        }
        guard started else { return .refused(reason: "a pairing is already running", later: true) }
        // The code goes only to the asker, over the owner-only status socket: the log is read by
        // more people (members of adm or systemd-journal), and a code is a key to this device.
        if printed != nil { logger.notice("pairing: a code was issued over the status socket") }
        var options = PairingSession.Options()
        options.code = code
        options.waitingCode = printed
        options.port = 0
        options.name = name
        let session = PairingSession(identity: identity, store: store, options: options, logger: logger) { [logger] line in
            logger.notice("pairing: \(line)")
        }
        do {
            try startDetachedThread(name: "pairing") { [self] in
                let outcome: State
                do {
                    outcome = .finished(try session.run())
                } catch {
                    outcome = .failed("\(error)")
                }
                state.withLock { $0 = outcome }
            }
        } catch {
            state.withLock { $0 = .failed("\(error)") }
        }
        return .pairingStarted(code: printed)
    }

    /// Stops trusting a device, in the daemon's own list (as `intercom unpair` does in the
    /// list of a state directory); the running call drops its session within 2 s.
    public func unpair(_ device: String) -> StatusReply {
        do {
            let removed = try store.remove(matching: device)
            let fingerprint = removed.keyBytes.map { Fingerprint(publicKey: $0).description } ?? "?"
            logger.notice("unpaired over the status socket", metadata: ["fingerprint": "\(fingerprint)"])
            return .unpaired(name: TerminalText.sanitized(removed.name), fingerprint: fingerprint)
        } catch {
            return .refused(reason: TerminalText.sanitized("\(error)"), later: false)
        }
    }

    /// Changes how loud a paired device plays, in the daemon's own list (as `intercom volume`,
    /// `mute` and `unmute` do in the list of a state directory); the running call follows
    /// within 2 s.
    public func changeListening(of device: String, _ change: (inout PeerListening) -> Void) -> StatusReply {
        do {
            let changed = try store.changeListening(matching: device, change)
            return .listening(
                name: TerminalText.sanitized(changed.name), fingerprint: changed.keyBytes.map { Fingerprint(publicKey: $0).description } ?? "invalid key",
                volumePercent: changed.listening.volumePercent, muted: changed.listening.muted
            )
        } catch {
            return .refused(reason: TerminalText.sanitized("\(error)"), later: false)
        }
    }

    /// How the pairing is going.
    public func result() -> StatusReply {
        state.withLock { state in
            switch state {
            case .idle: .refused(reason: "no pairing was asked for", later: false)
            case .running: .pairingRunning
            case .finished(.paired(let name, let fingerprint)): .paired(name: name, fingerprint: fingerprint)
            case .finished(.wrongCode): .pairingWrongCode
            case .finished(.timedOut): .pairingTimedOut
            case .failed(let reason): .refused(reason: TerminalText.sanitized(reason), later: false)
            }
        }
    }
}
