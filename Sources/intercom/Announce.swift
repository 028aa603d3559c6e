import ArgumentParser
import Dispatch
import Foundation
import IntercomCall
import IntercomCore
import IntercomIO

/// `intercom announce`: publishes an intercom service without a call and prints every
/// discovery event as one JSON object per line. Hidden: the LAN lab tests run it.
struct Announce: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Publish an intercom service by mDNS and print discovery events as JSON lines (for tests).",
        shouldDisplay: false
    )

    @Option(help: ArgumentHelp("The service name (default: user@hostname).", valueName: "NAME"))
    var name: String?

    @Option(help: "The UDP port to announce.")
    var port: Int = 5004

    @Option(help: ArgumentHelp("The peer id to announce, 32 hexadecimal digits (default: random).", valueName: "HEX"))
    var id: String?

    @Option(help: ArgumentHelp("Withdraw the service and exit after this many seconds (or on SIGINT/SIGTERM).", valueName: "SECONDS"))
    var duration: Double = 10

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1-65535") }
        guard duration.isFinite, duration >= 0 else { throw ValidationError("--duration must be a number of seconds") }
        if let id, PeerID(hexadecimal: id) == nil { throw ValidationError("--id must be 32 hexadecimal digits") }
    }

    func run() throws {
        var generator = SystemRandomNumberGenerator()
        let peerID = id.flatMap { PeerID(hexadecimal: $0) } ?? PeerID.random(using: &generator)
        let announcement: ServiceAnnouncement
        do {
            announcement = try ServiceAnnouncement(name: name ?? defaultPeerName(), port: UInt16(port), peerID: peerID)
        } catch {
            throw ValidationError("\(error)")
        }

        let stopRequested = DispatchSemaphore(value: 0)
        let signalSources = [SIGINT, SIGTERM].map { number in
            // Dispatch sees the signal only once its default action (exit) is off.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stopRequested.signal() }
            source.resume()
            return source
        }
        defer { signalSources.forEach { $0.cancel() } }

        let startedAt = SystemClock.monotonicNanoseconds()
        EventLine(event: "started", name: announcement.name, id: peerID.description, startedAt: startedAt).write()
        let discovery = try ServiceDiscovery(announcing: announcement) { event in
            EventLine(event, startedAt: startedAt).write()
        }
        _ = stopRequested.wait(timeout: .now() + duration)
        discovery.stop()
        var stopped = EventLine(event: "stopped", startedAt: startedAt)
        stopped.timeToFirstPeerSeconds = discovery.nanosecondsToFirstPeer.map { Double($0) / 1e9 }
        stopped.write()
    }
}

/// One line of `intercom announce`'s output.
private struct EventLine: Encodable {
    var event: String
    var name: String?
    var id: String?
    var peer: PeerListing?
    var message: String?
    var timeToFirstPeerSeconds: Double?
    /// CLOCK_MONOTONIC, which every network namespace shares: comparable across processes.
    var atNanoseconds: UInt64
    var afterSeconds: Double

    init(event: String, name: String? = nil, id: String? = nil, startedAt: UInt64) {
        self.event = event
        self.name = name
        self.id = id
        atNanoseconds = SystemClock.monotonicNanoseconds()
        afterSeconds = Double(atNanoseconds - startedAt) / 1e9
    }

    init(_ discoveryEvent: DiscoveryEvent, startedAt: UInt64) {
        let now = SystemClock.monotonicNanoseconds()
        switch discoveryEvent {
        case .appeared(let peer):
            self.init(event: "appeared", startedAt: startedAt)
            self.peer = PeerListing(peer, startedAt: startedAt, now: now)
        case .updated(let peer):
            self.init(event: "updated", startedAt: startedAt)
            self.peer = PeerListing(peer, startedAt: startedAt, now: now)
        case .disappeared(let peer):
            self.init(event: "disappeared", startedAt: startedAt)
            self.peer = PeerListing(peer, startedAt: startedAt, now: now)
        case .published(let serviceName):
            self.init(event: "published", name: serviceName, startedAt: startedAt)
        case .daemonUnavailable(let error):
            self.init(event: "daemon_unavailable", startedAt: startedAt)
            message = "\(error)"
        case .daemonAvailable:
            self.init(event: "daemon_available", startedAt: startedAt)
        case .failed(let error):
            self.init(event: "failed", startedAt: startedAt)
            message = "\(error)"
        }
    }

    /// Writes the line at once, unbuffered: tests read it while the process runs.
    func write() {
        guard let json = try? PeerListing.encoder.encode(self) else { return }
        FileHandle.standardOutput.write(json + Data("\n".utf8))
    }
}
