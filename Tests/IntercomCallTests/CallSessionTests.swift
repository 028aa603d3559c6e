@testable import IntercomCall
import IntercomCore
import IntercomSecurity
import Testing

/// The call's decisions (`CallSession`) on a virtual clock and a simulated network: who is
/// admitted, restarts, roaming, key renewal, targets and the peers' reports, each a few
/// seconds of a call run in milliseconds.
@Suite struct CallSessionTests {
    static let second = MediaTime.nanoseconds(.seconds(1))
    static let millisecond = MediaTime.nanoseconds(.milliseconds(1))

    /// Two paired devices, A calling B: sessions come up and each plays the other's stream
    /// without a gap once it started.
    static func pairedCall(seed: UInt64 = 1, rekeyInterval: Duration = .seconds(120)) -> SimulatedNetwork {
        var network = SimulatedNetwork(encrypted: true, seed: seed)
        network.rekeyInterval = rekeyInterval
        network.add("b", host: 2)
        network.add("a", host: 1, calls: ["b"])
        return network
    }

    @Test func pairedDevicesHearEachOtherWithinAHandshake() {
        var network = Self.pairedCall()
        let start = network.now
        network.run(for: .seconds(2))
        let aHeardB = network.firstHeard(at: "a", from: "b")
        let bHeardA = network.firstHeard(at: "b", from: "a")
        // A handshake takes three 2 ms crossings, and a stream is played after RFC 3550's
        // probation (two packets in sequence, 20 ms apart).
        #expect(aHeardB.map { $0 - start } ?? .max < 100 * Self.millisecond)
        #expect(bHeardA.map { $0 - start } ?? .max < 100 * Self.millisecond)
        #expect(network.packetsHeard(at: "a", from: "b") >= 90 && network.packetsHeard(at: "b", from: "a") >= 90)
        #expect(network.longestGap(at: "a", from: "b", since: aHeardB ?? start) ?? .max <= 21 * Self.millisecond)
        let figures = network.peers["a"]?.figures
        #expect(figures?.security.handshakes == 1)
        #expect(figures?.peers.map(\.name) == ["b"] && figures?.peers.first?.fingerprint != nil)
    }

    @Test func aStrangerIsNotAdmittedAndHearsNothing() {
        var network = SimulatedNetwork(encrypted: true)
        network.add("b", host: 2)
        network.add("a", host: 1, calls: ["b"])
        network.add("stranger", host: 9, calls: ["a", "b"], trusted: false)
        network.run(for: .seconds(3))
        #expect(network.packetsHeard(at: "a", from: "b") > 100)
        for name in ["a", "b"] {
            #expect(network.packetsHeard(at: name, from: "stranger") == 0)
            #expect(network.packetsHeard(at: "stranger", from: name) == 0)
            #expect(network.peers["stranger"]?.rtpDatagramsFrom[name] == nil, "\(name) sent the stranger audio")
            #expect((network.peers[name]?.figures?.security.untrustedHandshakes ?? 0) >= 1)
            #expect(network.peers[name]?.figures?.peers.contains { $0.fingerprint != nil && $0.name == "stranger" } == false)
        }
    }

    @Test func aPlainCallAdmitsAStreamButNotReportsAlone() {
        var network = SimulatedNetwork(encrypted: false)
        network.add("a", host: 1)
        network.add("b", host: 2, calls: ["a"])
        // A does not know B: B's stream makes it a peer (it was given our address), and A answers.
        network.run(for: .seconds(1))
        #expect(network.packetsHeard(at: "a", from: "b") >= 40 && network.packetsHeard(at: "b", from: "a") >= 40)
        #expect(network.peers["a"]?.figures?.peers.first?.origin == "learned")
        // One who only sends reports is never answered with a stream.
        network.add("listener", host: 3, calls: ["a"], talking: false)
        network.run(for: .seconds(2))
        #expect(network.peers["listener"]?.rtpDatagramsFrom["a"] == nil)
        #expect((network.peers["a"]?.session.counters.refusedPeer.load(ordering: .relaxed) ?? 0) >= 2)
        #expect(network.peers["a"]?.figures?.peers.count == 1)
    }

    @Test func aRestartedPeerIsHeardAgainAndItsOldStreamStops() {
        var network = Self.pairedCall()
        network.run(for: .seconds(2))
        let oldSSRC = network.peers["b"]!.session.ssrc
        let killed = network.now
        // As the soak does: B is killed, and back 3 s later. A, which calls B, has heard
        // nothing for that long and starts a handshake with B's new process.
        network.restart("b", after: .seconds(3))
        let restarted = network.now
        network.run(for: .seconds(3))
        let heardAgain = network.firstHeard(at: "a", from: "b").map { $0 - restarted }
        #expect(heardAgain ?? .max < 500 * Self.millisecond, "heard again after \(heardAgain.map { Double($0) / 1e6 } ?? -1) ms")
        #expect(network.packetsHeard(at: "b", from: "a") > 100)
        // The old stream stopped playing when its silence outlasted the sources' limit (5 s).
        #expect(network.peers["a"]!.stopped.contains(oldSSRC))
        #expect(network.peers["a"]!.heard[oldSSRC]!.last! < killed + 10 * Self.millisecond)
    }

    /// A peer restarted at once (a service restart) that calls nobody itself: its new process
    /// drops what comes on the old session and may not answer it (a stranger could make it
    /// send handshakes anywhere), so the caller finds it again when it notices the silence
    /// (3 s, `SecureChannel.Configuration.silenceBeforeRehandshake`) and handshakes again.
    @Test func aPeerRestartedAtOnceIsHeardAgainOnceItsCallerNoticesTheSilence() {
        var network = Self.pairedCall()
        network.run(for: .seconds(2))
        network.restart("b", after: .zero)
        let restarted = network.now
        network.run(for: .seconds(5))
        let heardAgain = network.firstHeard(at: "a", from: "b").map { $0 - restarted }
        #expect(heardAgain ?? .max < 3_500 * Self.millisecond, "heard again after \(heardAgain.map { Double($0) / 1e6 } ?? -1) ms")
        #expect(network.packetsHeard(at: "b", from: "a") > 50)
    }

    @Test func aPeerThatMovesToAnotherPortIsFollowed() {
        var network = Self.pairedCall()
        network.run(for: .seconds(2))
        network.move("b", toPort: 40_000)
        let moved = network.now
        network.run(for: .seconds(3))
        // B's next authenticated packet moves its session: A sends there without a new handshake.
        #expect(network.longestGap(at: "a", from: "b", since: moved) ?? .max <= 21 * Self.millisecond)
        #expect(network.longestGap(at: "b", from: "a", since: moved + 100 * Self.millisecond) ?? .max <= 21 * Self.millisecond)
        #expect(network.peers["a"]?.figures?.security.roams == 1)
        #expect(network.peers["a"]?.figures?.security.handshakes == 1)
    }

    @Test func keysAreRenewedWithoutAGap() {
        var network = Self.pairedCall(rekeyInterval: .seconds(2))
        network.run(for: .seconds(1))
        let settled = network.now
        network.run(for: .seconds(9))
        #expect((network.peers["a"]?.figures?.security.rekeys ?? 0) >= 3)
        #expect(network.longestGap(at: "a", from: "b", since: settled) ?? .max <= 21 * Self.millisecond)
        #expect(network.longestGap(at: "b", from: "a", since: settled) ?? .max <= 21 * Self.millisecond)
    }

    @Test func aRoomTargetSendsAudioToItsRoomOnly() {
        var network = SimulatedNetwork(encrypted: true)
        network.add("kitchen", host: 2) { $0.rooms = [GroupName("kitchen")!] }
        network.add("office", host: 3, calls: ["kitchen"]) { $0.rooms = [GroupName("office")!] }
        network.add("a", host: 1, calls: ["kitchen", "office"]) { $0.target = .room(GroupName("kitchen")!) }
        network.run(for: .seconds(3))
        // From the kitchen's first hello on (A learns its rooms there): within a report interval.
        #expect(network.packetsHeard(at: "kitchen", from: "a") > 90)
        // The office hears the others, but A's audio never reaches its machine.
        #expect(network.peers["office"]?.rtpDatagramsFrom["a"] == nil)
        #expect(network.packetsHeard(at: "office", from: "kitchen") > 100)
        #expect(network.peers["a"]?.figures?.reaches == 1)
        // A new target takes effect at once, hellos first.
        let changed = network.now
        network.with("a") { session, time, _ in session.announce(Announcement(target: .all, rooms: []), now: time.monotonic) }
        network.run(for: .seconds(1))
        #expect(network.longestGap(at: "office", from: "a", since: changed) ?? .max < 100 * Self.millisecond)
    }

    @Test func theWorstReportedLossReachesTheEncoderAndLeavesWithItsPeer() {
        var network = SimulatedNetwork(encrypted: false, seed: 7)
        network.add("b", host: 2)
        network.add("c", host: 3)
        network.add("a", host: 1, calls: ["b", "c"])
        network.links[SimulatedNetwork.linkName("a", "b")] = .init(loss: 0.2)
        network.run(for: .seconds(6))
        let reported = network.peers["a"]?.link
        // B's receiver reports say a fifth of A's packets were lost (fraction lost in 1/256).
        #expect((120...280).contains(reported?.lossPermille ?? 0), "\(String(describing: reported))")
        // B leaves without a word; once it is forgotten its loss no longer pins A's protection.
        network.remove("b")
        network.run(for: .seconds(8))
        #expect(network.peers["a"]?.link?.lossPermille == 0)
    }

    /// The encoder is told how many devices its stream goes to (`ListenerBudget`): as peers
    /// come and go and as the target narrows, within a publish interval.
    @Test func theEncoderIsToldHowManyDevicesHearItsStream() {
        var network = SimulatedNetwork(encrypted: true)
        let others = ["b", "c", "d", "e"]
        for (index, name) in others.enumerated() {
            network.add(name, host: UInt8(2 + index)) { $0.rooms = name == "b" ? [GroupName("kitchen")!] : [] }
        }
        network.add("a", host: 1, calls: others)
        network.run(for: .seconds(3))
        #expect(network.peers["a"]?.link?.listeners == 4)
        network.remove("e")
        network.run(for: .seconds(8))
        #expect(network.peers["a"]?.link?.listeners == 3)
        let narrowed = network.now
        network.with("a") { session, time, _ in
            session.announce(Announcement(target: .room(GroupName("kitchen")!), rooms: []), now: time.monotonic)
        }
        network.run(for: .milliseconds(150))
        #expect(network.peers["a"]?.link?.listeners == 1, "after \((network.now - narrowed) / 1_000_000) ms")
    }
}
