@testable import IntercomCore
import Testing

@Suite("Reception statistics")
struct ReceptionStatisticsTests {
    static let frameNanoseconds: UInt64 = 20_000_000
    static let frameTimestampUnits: UInt32 = 960

    /// Records packets sent every 20 ms that arrive after a constant transit plus `extraDelay(index)`.
    @discardableResult
    static func receive(
        _ statistics: inout ReceptionStatistics, sequenceNumbers: some Sequence<UInt16>,
        extraDelay: (Int) -> UInt64 = { _ in 0 }
    ) -> [Bool] {
        sequenceNumbers.enumerated().map { index, sequenceNumber in
            let sent = UInt64(sequenceNumber) * frameNanoseconds
            return statistics.record(
                sequenceNumber: sequenceNumber,
                rtpTimestamp: UInt32(sequenceNumber) &* frameTimestampUnits,
                arrivalNanoseconds: 5_000_000_000 + sent + extraDelay(index)
            )
        }
    }

    @Test func believesASourceAfterTwoSequentialPackets() {
        var statistics = ReceptionStatistics(ssrc: 7)
        let valid = Self.receive(&statistics, sequenceNumbers: [1000, 1001, 1002])
        #expect(valid == [false, true, true])
        #expect(statistics.isValidated)
        #expect(statistics.receivedCount == 2)
        #expect(statistics.expectedCount == 2)
    }

    @Test func staysOnProbationWhileSequenceNumbersJump() {
        var statistics = ReceptionStatistics(ssrc: 7)
        let valid = Self.receive(&statistics, sequenceNumbers: [10, 500, 9000, 9001, 9002])
        #expect(valid == [false, false, false, true, true])
        #expect(statistics.expectedCount == 2)
        #expect(statistics.cumulativeLost == 0)
    }

    @Test func countsLossAndTheFractionPerInterval() {
        var statistics = ReceptionStatistics(ssrc: 7)
        let missing: Set<UInt16> = [20, 21, 22, 50, 80]
        Self.receive(&statistics, sequenceNumbers: (0...100).filter { !missing.contains($0) })
        // Validation happens at sequence 1: expected 1...100.
        #expect(statistics.expectedCount == 100)
        #expect(statistics.cumulativeLost == 5)
        let first = statistics.makeReportBlock(now: 0, lastSenderReport: nil)
        #expect(first.cumulativeLost == 5)
        #expect(first.fractionLost == UInt8(5 * 256 / 100))
        #expect(first.extendedHighestSequence == 100)

        // A clean interval reports no fraction lost, while the cumulative count stays.
        Self.receive(&statistics, sequenceNumbers: 101...150)
        let second = statistics.makeReportBlock(now: 0, lastSenderReport: nil)
        #expect(second.fractionLost == 0)
        #expect(second.cumulativeLost == 5)

        // An interval losing half its packets.
        Self.receive(&statistics, sequenceNumbers: (151...250).filter { $0 % 2 == 0 })
        #expect(statistics.makeReportBlock(now: 0, lastSenderReport: nil).fractionLost == 128)
    }

    @Test func extendsSequenceNumbersAcrossWraparound() {
        var statistics = ReceptionStatistics(ssrc: 7)
        let sequence = (0..<40).map { UInt16(truncatingIfNeeded: 65_520 + $0) }
        Self.receive(&statistics, sequenceNumbers: sequence)
        #expect(statistics.extendedHighestSequence == 65_536 + 23)
        #expect(statistics.expectedCount == 39)
        #expect(statistics.cumulativeLost == 0)
        #expect(statistics.makeReportBlock(now: 0, lastSenderReport: nil).extendedHighestSequence == 0x0001_0017)
    }

    @Test func duplicatesMakeLossNegative() {
        var statistics = ReceptionStatistics(ssrc: 7)
        Self.receive(&statistics, sequenceNumbers: [1, 2, 3, 3, 4, 4, 5])
        #expect(statistics.cumulativeLost == -2)
        #expect(statistics.makeReportBlock(now: 0, lastSenderReport: nil).fractionLost == 0)
    }

    @Test func countsReorderedPacketsWithoutMovingTheMaximum() {
        var statistics = ReceptionStatistics(ssrc: 7)
        let valid = Self.receive(&statistics, sequenceNumbers: [1, 2, 3, 5, 4, 6])
        #expect(valid == [false, true, true, true, true, true])
        #expect(statistics.extendedHighestSequence == 6)
        #expect(statistics.cumulativeLost == 0)
    }

    /// After packets 100…200, a jump of 20 000 is doubted until the next sequential packet
    /// restarts the count (the sender started over); a lone stray one is ignored.
    @Test(arguments: [
        (after: [UInt16(20_000), 20_001, 20_002], highest: 20_002, received: 2, expected: 2),
        (after: [40_000, 201, 202], highest: 202, received: 102, expected: 102),
    ])
    func aSequenceJumpIsDoubtedUntilConfirmed(_ row: (after: [UInt16], highest: Int64, received: Int64, expected: Int64)) {
        var statistics = ReceptionStatistics(ssrc: 7)
        Self.receive(&statistics, sequenceNumbers: 100...200)
        let valid = Self.receive(&statistics, sequenceNumbers: row.after)
        #expect(valid == [false, true, true])
        #expect(statistics.extendedHighestSequence == row.highest)
        #expect(statistics.receivedCount == row.received)
        #expect(statistics.expectedCount == row.expected)
        #expect(statistics.cumulativeLost == 0)
    }

    @Test func jitterIsZeroForConstantTransit() {
        var statistics = ReceptionStatistics(ssrc: 7)
        Self.receive(&statistics, sequenceNumbers: 0...500)
        #expect(statistics.jitter == 0)
    }

    @Test func jitterFollowsVaryingTransit() {
        var statistics = ReceptionStatistics(ssrc: 7)
        // Every other packet 2 ms late: each transit difference is 2 ms, 96 units at 48 kHz.
        Self.receive(&statistics, sequenceNumbers: 0...1000) { $0 % 2 == 0 ? 0 : 2_000_000 }
        #expect((94...96).contains(statistics.jitter))
        #expect((1_950_000...2_000_000).contains(statistics.jitterNanoseconds))
        #expect(statistics.makeReportBlock(now: 0, lastSenderReport: nil).jitter == statistics.jitter)
    }

    @Test func jitterConvergesGradually() {
        var statistics = ReceptionStatistics(ssrc: 7)
        Self.receive(&statistics, sequenceNumbers: 0...2) { $0 == 2 ? 16_000_000 : 0 }
        // One 16 ms step (768 units) moves the estimate 1/16 of the way: 48 units.
        #expect(statistics.jitter == 48)
    }

    @Test func reportsTheLastSenderReportAndTheDelaySinceIt() {
        var statistics = ReceptionStatistics(ssrc: 7)
        Self.receive(&statistics, sequenceNumbers: 0...10)
        let senderReport = ReceivedSenderReport(
            ntpTimestamp: NTPTimestamp(seconds: 0xAABB_CCDD, fraction: 0xEEFF_0011), arrivalNanoseconds: 8_000_000_000)
        let block = statistics.makeReportBlock(now: 9_500_000_000, lastSenderReport: senderReport)
        #expect(block.ssrc == 7)
        #expect(block.lastSenderReport == 0xCCDD_EEFF)
        #expect(block.delaySinceLastSenderReport == 0x0001_8000)

        let withoutReport = statistics.makeReportBlock(now: 9_500_000_000, lastSenderReport: nil)
        #expect(withoutReport.lastSenderReport == 0)
        #expect(withoutReport.delaySinceLastSenderReport == 0)
    }

    @Test func computesRoundTripTimeFromAReportBlock() {
        let sentAt = NTPTimestamp(unixNanoseconds: 1_700_000_000_000_000_000)
        let block = ReportBlock(
            ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
            lastSenderReport: sentAt.shortFormat,
            delaySinceLastSenderReport: NTPShortFormat.fromNanoseconds(250_000_000))
        let arrival = NTPTimestamp(unixNanoseconds: 1_700_000_000_000_000_000 + 300_000_000)
        let roundTrip = block.roundTripNanoseconds(arrivedAt: arrival)
        // 50 ms, within the 15 µs resolution of the short format.
        #expect(roundTrip.map { (49_970_000...50_030_000).contains($0) } == true)

        var noReport = block
        noReport.lastSenderReport = 0
        #expect(noReport.roundTripNanoseconds(arrivedAt: arrival) == nil)

        let beforeTheReport = NTPTimestamp(unixNanoseconds: 1_700_000_000_000_000_000 + 100_000_000)
        #expect(block.roundTripNanoseconds(arrivedAt: beforeTheReport) == nil)
    }
}
