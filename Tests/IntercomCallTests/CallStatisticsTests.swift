import Foundation
@testable import IntercomCall
import Synchronization
import Testing

/// Every count the threads keep reaches the figures, and a fault reaches `intercom status`.
@Suite struct CallStatisticsTests {
    private static func statistics(playback: PlaybackSnapshot = .init(), network: NetworkCounters, capture: CaptureStatistics) -> CallStatistics {
        CallStatistics(
            playback: playback, network: NetworkSnapshot(), networkCounters: network, captureCounters: capture,
            devices: (capture: nil, playback: nil), inputStart: 0, outputStart: 0, runningSeconds: 1
        )
    }

    private static func report(_ statistics: CallStatistics) throws -> StatusReport {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let call = try JSONSerialization.jsonObject(with: encoder.encode(statistics))
        let report: [String: Any] = [
            "name": "test", "pid": 1, "port": 5004, "mode": "open", "transmitting": false, "microphone_level": 0, "call": call,
        ]
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(StatusReport.self, from: JSONSerialization.data(withJSONObject: report))
    }

    @Test func countersAppearInTheJSONUnderTheirNames() throws {
        let network = NetworkCounters()
        let capture = CaptureStatistics()
        network.rtpReceived.store(7, ordering: .relaxed)
        network.rtcpReceived.store(2, ordering: .relaxed)
        network.ownPackets.store(3, ordering: .relaxed)
        network.sendErrors.store(4, ordering: .relaxed)
        network.receiveErrors.store(5, ordering: .relaxed)
        capture.outboxFull.store(6, ordering: .relaxed)
        capture.errors.store(8, ordering: .relaxed)
        var playback = PlaybackSnapshot()
        playback.sinkErrors = 9
        let json = try JSONSerialization.jsonObject(
            with: Self.statistics(playback: playback, network: network, capture: capture).jsonData()
        ) as? [String: Any]
        let figures = try #require(json)
        #expect(figures["rtp_received"] as? Int == 7)
        #expect(figures["rtcp_received"] as? Int == 2)
        #expect((figures["dropped"] as? [String: Any])?["own_packets"] as? Int == 3)
        let faults = try #require(figures["faults"] as? [String: Any])
        #expect(faults as? [String: Int] == [
            "send_errors": 4, "receive_errors": 5, "outbox_full": 6, "capture_errors": 8, "playback_errors": 9,
        ])
    }

    @Test func statusNamesFaultsOnlyWhenThereAreSome() throws {
        let network = NetworkCounters()
        let capture = CaptureStatistics()
        let clean = try Self.report(Self.statistics(network: network, capture: capture)).text
        #expect(!clean.contains("FAULTS"), "\(clean)")
        network.sendErrors.store(2, ordering: .relaxed)
        capture.outboxFull.store(1, ordering: .relaxed)
        let faulty = try Self.report(Self.statistics(network: network, capture: capture)).text
        #expect(faulty.contains("FAULTS  send errors 2  receive errors 0  outbox full 1"), "\(faulty)")
    }
}
