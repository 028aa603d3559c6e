import IntercomCore
import Testing

@Suite struct StatusScreenTests {
    static let screen = StatusScreen(
        name: "ana@laptop", address: "10.77.0.1:5004", mode: .ptt, codec: CodecMode.lowDelay.description, transmitting: true, muted: false,
        microphoneLevel: 0.5,
        peers: [
            .init(name: "bo@desk", address: "10.77.0.2:5004", state: .talking, level: 0.3, lossPercent: 0.4,
                  jitterMilliseconds: 2.25, delayMilliseconds: 41),
            .init(name: "pi@door", address: "10.77.0.3:5004", state: .connected, level: 0, lossPercent: 12,
                  jitterMilliseconds: 30, delayMilliseconds: 80),
        ],
        keyHelp: "space: talk  m: mute  +/-: volume  q: quit"
    )

    @Test func rendersAKnownStateToText() {
        let expected = [
            " TX   intercom  ana@laptop  10.77.0.1:5004  mode ptt",
            "mic  [###############               ]  low delay (5 ms)",
            String(repeating: "─", count: 60),
            "talking  bo@desk  10.77.0.2:5004",
            "  good  [###       ] loss 0.4%  jitter 2.3 ms  delay 41.0 ms",
            "connected  pi@door  10.77.0.3:5004",
            "  poor  [          ] loss 12.0%  jitter 30.0 ms  delay 80.0…",
            String(repeating: "─", count: 60),
            "space: talk  m: mute  +/-: volume  q: quit",
        ]
        #expect(Self.screen.render(width: 60, colour: false) == expected)
    }

    /// The peer the volume keys act on is marked, and one that does not play as sent says how.
    @Test func theSelectedPeerAndHowEachPlaysHereAreShown() {
        var screen = Self.screen
        screen.peers[0].volumePercent = 60
        screen.peers[1].muted = true
        screen.peers[1].selected = true
        let lines = screen.render(width: 80, colour: false)
        #expect(lines[3] == "talking  bo@desk  10.77.0.2:5004")
        #expect(lines[4] == "  good  vol 60%  [###       ] loss 0.4%  jitter 2.3 ms  delay 41.0 ms")
        #expect(lines[5] == "connected  › pi@door  10.77.0.3:5004")
        #expect(lines[6].hasPrefix("  poor  muted here  ["))
        // A page says so where the state goes.
        var paging = screen
        paging.peers[0].page = true
        #expect(paging.render(width: 80, colour: false)[3].hasPrefix("PAGE  bo@desk"))
        // Alone, a peer needs no mark.
        screen.peers.removeFirst()
        #expect(screen.render(width: 80, colour: false)[3] == "connected  pi@door  10.77.0.3:5004")
    }

    @Test(arguments: [20, 32, 45])
    func fitsNarrowTerminals(width: Int) {
        for line in Self.screen.render(width: width, colour: false) {
            #expect(line.count <= width, "\(line.count) > \(width): \(line)")
        }
    }

    @Test func colourOnlyWhenAsked() {
        #expect(Self.screen.render(width: 80, colour: false).allSatisfy { !$0.contains("\u{1B}") })
        #expect(Self.screen.render(width: 80, colour: true).contains { $0.contains("\u{1B}[") })
    }

    @Test func metersReadInDecibels() {
        #expect(StatusScreen.meterLevel(amplitude: 1) == 1)
        #expect(abs(StatusScreen.meterLevel(amplitude: 0.1) - 0.6) < 1e-9)
        #expect(abs(StatusScreen.meterLevel(amplitude: 0.01) - 0.2) < 1e-9)
        #expect(StatusScreen.meterLevel(amplitude: 1e-6) == 0)
        #expect(StatusScreen.meterLevel(amplitude: 0) == 0)
    }

    @Test func theQualityWordFollowsTheFigures() {
        var peer = Self.screen.peers[0]
        #expect(peer.quality == "good")
        peer.lossPercent = 5
        #expect(peer.quality == "fair")
        peer.jitterMilliseconds = 50
        #expect(peer.quality == "poor")
        peer.state = .found
        #expect(peer.quality == "nothing heard", "a peer that sent nothing has no link to call good")
    }
}
