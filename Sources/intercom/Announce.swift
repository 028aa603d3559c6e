import ArgumentParser
import Dispatch
import FoundationEssentials
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

        let stop = StopSignal()
        let startedAt = SystemClock.monotonicNanoseconds()
        DiscoveryEventLine(event: "started", name: announcement.name, id: peerID.description, startedAt: startedAt).write()
        let discovery = try ServiceDiscovery(announcing: announcement) { event in
            DiscoveryEventLine(event, startedAt: startedAt).write()
        }
        stop.wait(seconds: duration)
        discovery.stop()
        var stopped = DiscoveryEventLine(event: "stopped", startedAt: startedAt)
        stopped.timeToFirstPeerSeconds = discovery.nanosecondsToFirstPeer.map { MediaTime.seconds(nanoseconds: Double($0)) }
        stopped.write()
    }
}

extension DiscoveryEventLine {
    /// Writes the line at once, unbuffered: tests read it while the process runs.
    func write() {
        guard let json = try? PeerListing.encoder.encode(self) else { return }
        StandardStream.output.write(String(decoding: json, as: UTF8.self) + "\n")
    }
}
