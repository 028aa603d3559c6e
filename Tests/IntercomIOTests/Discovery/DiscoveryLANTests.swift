import Foundation
import IntercomIO
import TestSupport
import Testing

/// Real avahi-daemons in network namespaces, with `intercom announce` publishing and
/// browsing and `intercom peers` listing. Serialized: the discovery times are measured.
@Suite(
    "Discovery: in the LAN lab",
    .serialized,
    .enabled(if: LANLab.isAvailable, "the LAN lab needs root and the tools scripts/setup installs")
)
struct DiscoveryLANTests {
    @Test func twoHostsPublishAndFindEachOther() throws {
        let lab = try LANLab(hosts: 2)
        defer { lab.shutDown() }
        let alice = try Announcer(lab, host: 1, name: "alice", port: 5004)
        let bob = try Announcer(lab, host: 2, name: "bob", port: 5006)

        let bobAtAlice = try #require(alice.waitFor("appeared", of: "bob", seconds: 5))
        let aliceAtBob = try #require(bob.waitFor("appeared", of: "alice", seconds: 5))
        print("discovery: h1 found h2 after \(bobAtAlice.afterSeconds) s, h2 found h1 after \(aliceAtBob.afterSeconds) s (goal < 1 s)")
        #expect(max(bobAtAlice.afterSeconds, aliceAtBob.afterSeconds) < 2, "the goal is under 1 s; 2 s allows for a loaded machine")

        #expect(bobAtAlice.peer?.id == bob.peerID && bobAtAlice.peer?.id != nil)
        #expect(bobAtAlice.peer?.port == 5006 && bobAtAlice.peer?.version == ServiceAnnouncement.protocolVersion)
        #expect(bobAtAlice.peer?.host == "h2.local")
        #expect(aliceAtBob.peer?.id == alice.peerID && aliceAtBob.peer?.port == 5004)
        // Over IPv4 and IPv6 (link-local, with its zone so that it can be dialled); the
        // second address may come in an update just after the peer appeared.
        for (announcer, other, ipv4) in [(alice, "bob", lab.ipv4Address(2)), (bob, "alice", lab.ipv4Address(1))] {
            let complete = announcer.waitFor(seconds: 3) { line in
                guard line.peer?.name == other, let addresses = line.peer?.addresses else { return false }
                return addresses.contains(ipv4) && addresses.contains { $0.hasPrefix("fe80:") && $0.hasSuffix("%lan0") }
            }
            #expect(complete != nil, "\(announcer.name) saw \(other) at \(announcer.lines.compactMap(\.peer?.addresses))")
        }

        #expect(alice.stop() == 0)
        #expect(bob.stop() == 0)
        // Neither reports itself, and each measured its time to the first peer.
        #expect(!alice.lines.contains { $0.peer?.name == "alice" })
        #expect(!bob.lines.contains { $0.peer?.name == "bob" })
        let summary = try #require(alice.lines.last)
        #expect(summary.event == "stopped")
        #expect(abs((summary.timeToFirstPeerSeconds ?? -1) - bobAtAlice.afterSeconds) < 0.05)
    }

    @Test func avahiBrowseInAnotherHostListsOurServiceWithItsTXTRecord() throws {
        let lab = try LANLab(hosts: 2)
        defer { lab.shutDown() }
        let alice = try Announcer(lab, host: 1, name: "alice kitchen", port: 5004)
        try #require(alice.waitFor(seconds: 5) { $0.event == "published" } != nil)
        let id = try #require(alice.peerID)

        let browse = try lab.run(2, "avahi-browse", ["--resolve", "--parsable", "--terminate", "_intercom._udp"])
        #expect(browse.wait(seconds: 10) == 0)
        // =;lan0;IPv4;alice\032kitchen;_intercom._udp;local;h1.local;10.77.0.1;5004;"v=2" "id=…" …
        let resolved = browse.standardOutput.split(separator: "\n").filter { $0.hasPrefix("=;lan0;") && $0.contains(";alice\\032kitchen;_intercom._udp;local;h1.local;") }
        #expect(resolved.count == 2, "one sighting per IP version: \(browse.standardOutput)")
        for line in resolved {
            // avahi-browse may resolve either IP version's sighting to either of h1's addresses.
            let address = line.split(separator: ";")[7]
            #expect(address == lab.ipv4Address(1) || address.hasPrefix("fe80:"), "\(line)")
            #expect(line.hasSuffix(";5004;\"v=3\" \"id=\(id)\" \"codec=opus\" \"ptime=10\" \"chan=\" \"fp=\""), "\(line)")
        }
        #expect(alice.stop() == 0)
    }

    /// alice on the lab's first host and bob on its second, once each has found the other.
    static func announcersThatFoundEachOther(in lab: LANLab) throws -> (alice: Announcer, bob: Announcer) {
        let alice = try Announcer(lab, host: 1, name: "alice")
        let bob = try Announcer(lab, host: 2, name: "bob")
        try #require(alice.waitFor("appeared", of: "bob", seconds: 5) != nil)
        try #require(bob.waitFor("appeared", of: "alice", seconds: 5) != nil)
        return (alice, bob)
    }

    @Test func stoppedPublisherDisappearsWithinThreeSeconds() throws {
        let lab = try LANLab(hosts: 2)
        defer { lab.shutDown() }
        let (alice, bob) = try Self.announcersThatFoundEachOther(in: lab)

        let stoppedAt = SystemClock.monotonicNanoseconds()
        #expect(alice.stop() == 0)
        let gone = try #require(bob.waitFor("disappeared", of: "alice", after: stoppedAt, seconds: 5))
        let seconds = Double(gone.atNanoseconds - stoppedAt) / 1e9
        print("discovery: a stopped publisher disappeared after \(seconds) s (limit 3 s)")
        #expect(seconds < 3)
        #expect(gone.peer?.id == alice.peerID)
        #expect(bob.stop() == 0)
    }

    @Test func restartedDaemonIsFollowedWithoutRestartingTheClients() throws {
        let lab = try LANLab(hosts: 2)
        defer { lab.shutDown() }
        let (alice, bob) = try Self.announcersThatFoundEachOther(in: lab)

        let restartedAt = SystemClock.monotonicNanoseconds()
        try lab.restartAvahi(2)
        // bob's client noticed, reconnected by itself and published again…
        try #require(bob.waitFor(seconds: 5) { $0.event == "daemon_available" && $0.atNanoseconds >= restartedAt } != nil)
        let republished = try #require(bob.waitFor(seconds: 5) { $0.event == "published" && $0.atNanoseconds >= restartedAt })
        // …so alice finds bob again (having seen it leave with the old daemon's goodbye)…
        let foundAgain = try #require(alice.waitFor("appeared", of: "bob", after: restartedAt, seconds: 5))
        print("discovery: after an avahi-daemon restart, republished in \(Double(republished.atNanoseconds - restartedAt) / 1e9) s, found again in \(Double(foundAgain.atNanoseconds - restartedAt) / 1e9) s")
        // …and bob browses again: its new browser resolves alice, whom it never let go, and
        // confirms her (or reports what changed)…
        let confirmed = bob.waitFor(seconds: 5) {
            ["confirmed", "updated"].contains($0.event) && $0.peer?.name == "alice" && $0.atNanoseconds >= restartedAt
        }
        try #require(confirmed != nil, "bob's events since the restart: \(bob.lines.filter { $0.atNanoseconds >= restartedAt }.map { "\($0.event) \($0.peer?.name ?? "")" })")
        print("discovery: the restarted side confirmed its peer in \(Double(confirmed!.atNanoseconds - restartedAt) / 1e9) s")
        let aliceAtBob = bob.lines.filter { $0.peer?.name == "alice" }
        #expect(!aliceAtBob.contains { $0.event == "disappeared" }, "bob lost alice: \(aliceAtBob.map(\.event))")
        // …and finds a newcomer.
        let carol = try Announcer(lab, host: 1, name: "carol")
        try #require(bob.waitFor("appeared", of: "carol", after: restartedAt, seconds: 5) != nil)

        #expect(bob.lines.filter { $0.event == "daemon_unavailable" }.count <= 1)
        #expect(carol.stop() == 0)
        #expect(alice.stop() == 0)
        #expect(bob.stop() == 0)
    }

    @Test func missingDaemonGivesOneClearWarningThenDiscoveryStartsWithIt() throws {
        let lab = try LANLab(hosts: 2, withoutAvahi: [1])
        defer { lab.shutDown() }
        let alice = try Announcer(lab, host: 1, name: "alice", duration: 20)
        let bob = try Announcer(lab, host: 2, name: "bob", duration: 20)
        let warning = try #require(alice.waitFor(seconds: 5) { $0.event == "daemon_unavailable" })
        #expect(warning.message == "mDNS discovery is unavailable: avahi-daemon is not running (Daemon not running)")

        // `intercom peers` warns on stderr, lists nothing and succeeds.
        let (peers, listing) = try listPeers(lab, host: 1, wait: 0.5)
        #expect(listing.wait(seconds: 0) == 0)
        #expect(peers?.isEmpty == true, "stdout: \(listing.standardOutput)")
        #expect(listing.standardError.contains("warning: mDNS discovery is unavailable: avahi-daemon is not running"))

        // When the daemon starts, the waiting client connects, publishes and browses.
        try lab.startAvahi(1)
        try #require(alice.waitFor(seconds: 5) { $0.event == "published" } != nil)
        #expect(alice.waitFor("appeared", of: "bob", seconds: 5) != nil)
        #expect(bob.waitFor("appeared", of: "alice", seconds: 5) != nil)
        #expect(alice.lines.filter { $0.event == "daemon_unavailable" }.count == 1)
        #expect(alice.stop() == 0)
        #expect(bob.stop() == 0)
    }

    @Test func sameNameIsRenamedUntilEveryServiceHasItsOwn() throws {
        let lab = try LANLab(hosts: 2)
        defer { lab.shutDown() }
        // Two hosts probe one name at once, and a second service takes it on one host.
        let announcers = try [1, 2, 1].map { host in try Announcer(lab, host: host, name: "alice") }
        // Avahi breaks a tie between simultaneous probes record by record, so two hosts may
        // both keep a name for a moment, until one of them sees the other's announcement.
        let startedAt = SystemClock.monotonicNanoseconds()
        var names: [String?] = []
        repeat {
            usleep(100_000)
            names = announcers.map { announcer in announcer.lines.last { $0.event == "published" }?.name }
        } while Set(names.compactMap { $0 }).count < 3 && SystemClock.monotonicNanoseconds() - startedAt < 15_000_000_000
        print("discovery: one name on three services became \(names.map { $0 ?? "?" }) within \(Double(SystemClock.monotonicNanoseconds() - startedAt) / 1e9) s")
        // Which of them keeps the plain name is Avahi's call: when the probes cross, every
        // side may see a conflict and take an alternative, so only uniqueness is promised.
        #expect(Set(names.compactMap { $0 }).count == 3)
        #expect(names.allSatisfy { $0?.hasPrefix("alice") == true })
        // Each finds the other two under their final names, told apart by id.
        for (index, announcer) in announcers.enumerated() {
            for (otherIndex, other) in announcers.enumerated() where otherIndex != index {
                let found = announcer.waitFor(seconds: 5) { $0.peer?.name == names[otherIndex] && $0.peer?.id == other.peerID && $0.event != "disappeared" }
                #expect(found != nil, "service \(index) did not find \(names[otherIndex] ?? "?")")
            }
        }
        for announcer in announcers { #expect(announcer.stop() == 0) }
    }

    @Test func discoveryGetsThroughPacketLoss() throws {
        let lab = try LANLab(hosts: 2)
        defer { lab.shutDown() }
        try lab.setLoss(1, percent: 20)
        try lab.setLoss(2, percent: 20)
        let alice = try Announcer(lab, host: 1, name: "alice")
        let bob = try Announcer(lab, host: 2, name: "bob")
        let bobAtAlice = try #require(alice.waitFor("appeared", of: "bob", seconds: 8))
        let aliceAtBob = try #require(bob.waitFor("appeared", of: "alice", seconds: 8))
        print("discovery: with 20 % loss each way, found after \(bobAtAlice.afterSeconds) s and \(aliceAtBob.afterSeconds) s")
        #expect(alice.stop() == 0)
        #expect(bob.stop() == 0)
    }

    @Test func threeHostsAllSeeEachOther() throws {
        let lab = try LANLab(hosts: 3)
        defer { lab.shutDown() }
        let names = ["alice", "bob", "carol"]
        let announcers = try names.enumerated().map { index, name in try Announcer(lab, host: index + 1, name: name) }

        var times: [String] = []
        for announcer in announcers {
            for other in names where other != announcer.name {
                let seen = try #require(announcer.waitFor("appeared", of: other, seconds: 5), "\(announcer.name) did not find \(other)")
                times.append("\(announcer.name)→\(other) \(seen.afterSeconds) s")
            }
        }
        print("discovery: three hosts: \(times.joined(separator: ", "))")

        // A browse-only `intercom peers` lists every service, its own host's included.
        let (listed, listing) = try listPeers(lab, host: 3, wait: 1)
        let peers = try #require(listed, "stdout: \(listing.standardOutput) stderr: \(listing.standardError)")
        #expect(peers.map(\.name).sorted() == names)
        print("discovery: a new browser found peers already on the LAN after \(peers.map(\.discoveredAfterSeconds)) s")
        for (index, name) in names.enumerated() {
            let peer = try #require(peers.first { $0.name == name })
            #expect(peer.addresses.contains(lab.ipv4Address(index + 1)))
            #expect(peer.port == 5004 && peer.version == ServiceAnnouncement.protocolVersion)
            #expect(peer.id == announcers[index].peerID)
            #expect((0..<30).contains(peer.lastSeenSecondsAgo))
        }

        // The table for people.
        let table = try lab.intercom(1, ["peers", "--wait", "1"])
        #expect(table.wait(seconds: 10) == 0)
        let rows = table.standardOutput.split(separator: "\n")
        #expect(rows.first?.hasPrefix("NAME") == true && rows.first?.contains("LAST SEEN") == true)
        #expect(rows.dropFirst().map { String($0.prefix { $0 != " " }) } == names)
        #expect(rows.dropFirst().allSatisfy { $0.contains("5004") && $0.hasSuffix(" s ago") })
        for announcer in announcers { #expect(announcer.stop() == 0) }
    }
}

@Suite("Discovery: without a D-Bus system bus")
struct DiscoveryWithoutBusTests {
    /// Touches no network: the bus address names a socket that does not exist.
    @Test func peersWarnsOnceAndListsNothing() throws {
        let peers = try ChildProcess(
            ChildProcess.intercomPath, ["peers", "--wait", "2.5"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/intercom-test-bus"]
        )
        #expect(peers.wait(seconds: 10) == 0)
        #expect(peers.standardOutput == "no intercom peers found in 2.5 s\n")
        // One warning, though discovery tried the bus again meanwhile.
        let warnings = peers.standardError.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings == ["intercom: warning: mDNS discovery is unavailable: cannot reach avahi-daemon over the D-Bus system bus (Daemon not running); no peers can be found (call them with --peer HOST:PORT)"])
    }
}
