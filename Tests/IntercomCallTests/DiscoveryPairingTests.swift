import Foundation
import IntercomCore
import IntercomIO
import IntercomSecurity
import Testing
import TestSupport

extension NetworkEndToEndTests {
    /// Two devices in the LAN lab, each with its own identity: found but not called until they
    /// pair, by mDNS alone, while their daemons run; then they call each other.
    @Suite(.enabled(if: LANLab.isAvailable, "the LAN lab needs root and the tools scripts/setup installs"))
    struct DiscoveryPairingTests {
        typealias Device = SecureCallTests.Device
        typealias HostDaemon = DiscoveryCallTests.HostDaemon

        @Test func devicesFoundOnTheLANAreCalledOnlyOncePairedByMDNS() throws {
            let lab = try LANLab(hosts: 2)
            defer { lab.shutDown() }
            let (front, back) = (try Device("front"), try Device("back"))
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph).path
            let alice = try HostDaemon(lab, host: 1, name: "front door", speech: speech, extra: front.arguments)
            let bob = try HostDaemon(lab, host: 2, name: "back door", speech: speech, extra: back.arguments + ["--room", "garage"])
            defer {
                alice.process.signal(SIGTERM)
                bob.process.signal(SIGTERM)
            }
            let (aliceAddress, bobAddress) = ("\(lab.ipv4Address(1)):5004", "\(lab.ipv4Address(2)):5004")

            // Found, listed as not paired, and not called. The daemons may take a while to start
            // and publish on a loaded machine: look again until the other one is there.
            var backEntry: PeerListing?
            var listed = ""
            let lookingSince = Date()
            while backEntry == nil, Date().timeIntervalSince(lookingSince) < 30 {
                let listing = try lab.intercom(1, ["peers", "--json", "--wait", "3"] + front.arguments)
                #expect(listing.wait(seconds: 15) == 0)
                listed = listing.standardOutput
                let entries = (try? PeerListing.decoder.decode([PeerListing].self, from: Data(listed.utf8))) ?? []
                backEntry = entries.first { $0.name == "back door" }
            }
            #expect(backEntry?.paired == false, "\(listed)")
            #expect(backEntry?.rooms == nil, "rooms known without a daemon that heard them: \(listed)")
            #expect(backEntry?.fingerprint == Fingerprint(publicKey: back.identity.publicKey).description)
            #expect(!alice.heard(bobAddress) && !bob.heard(aliceAddress))

            // Pair by mDNS alone while the daemons run (they hold port 5004: pairing takes another).
            let waiting = try lab.intercom(1, ["pair", "--name", "front door", "--timeout", "30"] + front.arguments)
            var code = ""
            let started = Date()
            while code.isEmpty, Date().timeIntervalSince(started) < 10 {
                code = waiting.standardOutput.split(separator: "\n").first { $0.hasPrefix("code: ") }.map { String($0.dropFirst(6)) } ?? ""
                usleep(50_000)
            }
            let joining = try lab.intercom(2, ["pair", "--code", code, "--name", "back door", "--timeout", "20"] + back.arguments)
            #expect(joining.wait(seconds: 30) == 0, "\(joining.standardOutput) \(joining.standardError)")
            #expect(waiting.wait(seconds: 30) == 0, "\(waiting.standardOutput) \(waiting.standardError)")

            // The running daemons notice the new pairing and call each other.
            let connected = waitUntil(seconds: 12) { alice.heard(bobAddress) && bob.heard(aliceAddress) }
            #expect(connected != nil, "alice: \(alice.peers())\n\(alice.process.standardError)")
            let prints = alice.peers().compactMap(\.fingerprint)
            #expect(prints.contains(Fingerprint(publicKey: back.identity.publicKey).description), "\(prints)")

            // Its rooms, told inside the call, are listed where the daemon that heard them runs.
            let told = waitUntil(seconds: 10) { alice.peers().contains { $0.rooms == ["garage"] } }
            #expect(told != nil, "alice: \(alice.peers().map(\.rooms))")
            let withRooms = try lab.intercom(1, ["peers", "--json", "--wait", "3", "--socket", alice.socket] + front.arguments)
            #expect(withRooms.wait(seconds: 15) == 0)
            let entries = (try? PeerListing.decoder.decode([PeerListing].self, from: Data(withRooms.standardOutput.utf8))) ?? []
            #expect(entries.first { $0.name == "back door" }?.rooms == ["garage"], "\(withRooms.standardOutput)")
        }
    }
}
