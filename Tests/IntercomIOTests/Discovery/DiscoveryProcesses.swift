import Foundation
import IntercomIO
import TestSupport

/// One JSON line of `intercom announce`, and one peer of it or of `intercom peers --json`.
typealias AnnounceLine = DiscoveryEventLine
typealias PeerLine = PeerListing

/// `intercom announce` running in a lab host, read while it runs.
struct Announcer {
    let name: String
    let process: ChildProcess

    /// Starts publishing `name` from host `host` for at most `duration` seconds.
    init(_ lab: LANLab, host: Int, name: String, port: Int = 5004, duration: Double = 15) throws {
        self.name = name
        process = try lab.intercom(host, ["announce", "--name", name, "--port", String(port), "--duration", String(duration)])
    }

    /// The lines written so far (a line still being written is left for later).
    var lines: [AnnounceLine] {
        process.standardOutput.split(separator: "\n").compactMap { try? PeerListing.decoder.decode(AnnounceLine.self, from: Data($0.utf8)) }
    }

    /// Our own peer id, from the first line.
    var peerID: String? { lines.first { $0.event == "started" }?.id }

    /// The first line that matches, waiting up to `seconds` for it.
    func waitFor(seconds: Double, _ matches: (AnnounceLine) -> Bool) -> AnnounceLine? {
        let deadline = SystemClock.monotonicNanoseconds() + UInt64(seconds * 1e9)
        repeat {
            if let line = lines.first(where: matches) { return line }
            usleep(20_000)
        } while SystemClock.monotonicNanoseconds() < deadline
        return lines.first(where: matches)
    }

    /// The first `event` about the peer named `peerName` at or after `after` (monotonic ns).
    func waitFor(_ event: String, of peerName: String, after: UInt64 = 0, seconds: Double) -> AnnounceLine? {
        waitFor(seconds: seconds) { $0.event == event && $0.peer?.name == peerName && $0.atNanoseconds >= after }
    }

    /// Asks it to withdraw and exit, and waits; its exit status, nil if it had to be killed.
    func stop() -> Int32? {
        process.signal(SIGTERM)
        return process.wait(seconds: 5)
    }
}

/// Runs `intercom peers --json` in a lab host and decodes what it prints.
func listPeers(_ lab: LANLab, host: Int, wait: Double) throws -> (peers: [PeerLine]?, process: ChildProcess) {
    let process = try lab.intercom(host, ["peers", "--json", "--wait", String(wait)])
    process.wait(seconds: wait + 10)
    return (try? PeerListing.decoder.decode([PeerLine].self, from: Data(process.standardOutput.utf8)), process)
}
