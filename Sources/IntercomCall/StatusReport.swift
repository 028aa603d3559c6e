import FoundationEssentials
import Glibc
import IntercomCore
import IntercomIO

/// What `intercom status` shows of a running peer: the call's figures, and the settings and
/// levels of the moment.
public struct StatusReport: Codable, Sendable {
    public var name: String
    /// The daemon's process, for signals (SIGHUP to reload, SIGTERM to stop).
    public var pid: Int32
    public var port: Int
    public var mode: String
    public var transmitting: Bool
    public var microphoneLevel: Double
    public var call: CallStatistics

    public init(call: Call) {
        name = call.configuration.name
        pid = getpid()
        port = Int(call.localPort)
        mode = call.mode.rawValue
        transmitting = call.isTransmitting
        microphoneLevel = call.microphoneLevel
        self.call = call.statistics()
    }

    /// Reads a status as the status socket sends it.
    public init(json: Data) throws {
        self = try FiguresJSON.decoder().decode(Self.self, from: json)
    }

    /// The reply to the bytes of one status-socket request. Anyone who may connect (the socket's
    /// group) may read the status; pairing and paging are for the daemon's own user and root.
    public static func reply(
        to bytes: [UInt8], from client: StatusSocket.Client, call: Call, pairing: DaemonPairing? = nil, page: DaemonPage? = nil
    ) -> String {
        let request = StatusRequest.parse(bytes)
        if case .success(.status) = request {
            guard let data = try? FiguresJSON.encoder(pretty: false).encode(StatusReport(call: call)) else {
                return StatusReply.refused(reason: "cannot encode the status", later: false).line
            }
            return String(decoding: data, as: UTF8.self) + "\n"
        }
        return answer(request, from: client, pairing: pairing, page: page).line
    }

    /// The answer to a request other than `status`.
    private static func answer(
        _ request: Result<StatusRequest, StatusRequestError>, from client: StatusSocket.Client, pairing: DaemonPairing?, page: DaemonPage?
    ) -> StatusReply {
        let notEncrypted = StatusReply.refused(reason: "this call has no paired devices (it is not encrypted)", later: false)
        let noPages = StatusReply.refused(reason: "this intercom does not send pages for others", later: false)
        if case .success(let asked) = request, !asked.isReadOnly, !client.isOwnerOrRoot {
            return .refused(reason: "only root or the daemon's own user may ask '\(asked.line)'", later: false)
        }
        switch request {
        case .success(.status):
            preconditionFailure("the status is answered with the call's figures")
        case .success(.pair(let code)):
            return pairing?.start(code: code) ?? notEncrypted
        case .success(.pairResult):
            return pairing?.result() ?? notEncrypted
        case .success(.unpair(let device)):
            return pairing?.unpair(device) ?? notEncrypted
        case .success(.volume(let device, let percent)):
            return pairing?.changeListening(of: device) { $0 = PeerListening(volumePercent: percent, muted: $0.muted) } ?? notEncrypted
        case .success(.mute(let device)):
            return pairing?.changeListening(of: device) { $0.muted = true } ?? notEncrypted
        case .success(.unmute(let device)):
            return pairing?.changeListening(of: device) { $0.muted = false } ?? notEncrypted
        case .success(.page(let target)):
            guard let page else { return noPages }
            guard let file = client.passedFile else { return .refused(reason: "a page needs its recording passed as an open file", later: false) }
            return page.start(file: file, target: target)
        case .success(.pageResult):
            return page?.result() ?? noPages
        case .failure(let error):
            return StatusReply(error)
        }
    }

    /// A few lines for a person.
    public var text: String {
        var lines = ["\(TerminalText.sanitized(name))  pid \(pid)  port \(port)  mode \(mode)  \(transmitting ? "TRANSMITTING" : "listening")"
            + (call.to == "all" ? "" : "  to \(call.to) (\(call.toPeers == 0 ? "no device reachable: nothing is sent" : "\(call.toPeers) devices"))")]
        let security = call.security
        lines.append(security.encrypted
            ? "encrypted  this device \(security.fingerprint ?? "?")  handshakes \(security.handshakes)  rekeys \(security.rekeys)  refused: \(security.authFailPackets) unauthentic, \(security.replayPackets) replayed, \(security.untrustedHandshakes) not paired, \(security.rateLimited) rate-limited"
            : "UNENCRYPTED: anyone on the LAN can listen")
        lines.append("microphone \((20 * log10(max(microphoneLevel, 1e-5))).fixed(0)) dBFS")
        for (role, xruns, device) in [("microphone", "overruns", call.captureDevice), ("speaker", "underruns", call.playbackDevice)] {
            guard let device, !device.open || device.faults > 0 || device.xruns > 0 else { continue }
            lines.append("\(role) '\(device.name)' \(device.open ? "open" : "MISSING")  faults \(device.faults)  recoveries \(device.recoveries)  \(xruns) \(device.xruns)")
        }
        if let discovery = call.discovery.fault { lines.append(discovery) }
        let faults = call.faults
        if faults.total > 0 {
            lines.append("FAULTS  send errors \(faults.sendErrors)  receive errors \(faults.receiveErrors)  outbox full \(faults.outboxFull)  capture errors \(faults.captureErrors)  playback errors \(faults.playbackErrors)")
        }
        if call.peers.isEmpty { lines.append("no peers") }
        let streams = Dictionary(call.streams.map { ($0.ssrc, $0) }, uniquingKeysWith: { first, _ in first })
        for peer in call.peers {
            var line = "peer \(TerminalText.sanitized(peer.name ?? "?"))  \(peer.address)\(peer.fingerprint.map { "  \($0)" } ?? "")  \(peer.origin)\(peer.talking ? "  talking \(peer.to)" : "")"
            if !peer.rooms.isEmpty { line += "  rooms \(peer.rooms.joined(separator: ", "))" }
            if let listening = peer.listening, listening.muted || listening.volumePercent != 100 {
                line += listening.muted ? "  muted here" : "  volume \(listening.volumePercent) %"
            }
            if let stream = peer.ssrc.flatMap({ streams[$0] }), stream.page { line += "  PAGE" }
            if let stream = peer.ssrc.flatMap({ streams[$0] }) {
                let heard = max(1, stream.received + stream.lost)
                line += "  loss \((Double(stream.lost) * 100 / Double(heard)).fixed(1))%  jitter \(stream.jitterMs.fixed(1)) ms  delay \(stream.currentDelayMs.fixed(1)) ms"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

/// A `StatusReply` on the status socket: one JSON object on one line.
extension StatusReply {
    public var line: String {
        guard let data = try? FiguresJSON.encoder(pretty: false).encode(self) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// A reply line read back; throws for anything else (such as the call's figures).
    public init(line: String) throws {
        self = try FiguresJSON.decoder().decode(StatusReply.self, from: Data(line.utf8))
    }

    /// What a client prints when the daemon refused or answered something it did not ask for.
    public var refusal: String {
        if case .refused(let reason, _) = self { return TerminalText.sanitized(reason) }
        return "an unexpected reply (\(TerminalText.sanitized(line.trimmingWhitespace())))"
    }
}
