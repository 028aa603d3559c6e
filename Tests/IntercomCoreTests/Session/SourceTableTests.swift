import IntercomCore
import Testing

@Suite("Source table: bounded, owned, expiring")
struct SourceTableTests {
    typealias Table = SourceTable<String>

    /// Two packets in sequence: enough to validate a source.
    static func validate(_ table: inout Table, ssrc: UInt32, owner: String, reserved: Bool = false, at now: UInt64) -> Table.Outcome {
        _ = table.record(ssrc: ssrc, owner: owner, reserved: reserved, sequenceNumber: 1, timestamp: 0, now: now)
        return table.record(ssrc: ssrc, owner: owner, reserved: reserved, sequenceNumber: 2, timestamp: 480, now: now)
    }

    @Test func aStrangerSprayingSSRCsKeepsOnlyItsOwnFewAndARealPeerStillGetsIn() {
        var table = Table()
        for ssrc in UInt32(1)...500 { _ = Self.validate(&table, ssrc: ssrc, owner: "stranger", at: UInt64(ssrc)) }
        #expect(table.sources.count == table.limits.perOwner)
        #expect(Self.validate(&table, ssrc: 9_999, owner: "peer", at: 1_000) == .recorded(validated: true))
    }

    @Test func manyStrangersOnProbationMakeRoomForANewSource() {
        var table = Table()
        for index in 0..<table.limits.total {
            _ = table.record(ssrc: UInt32(index + 1), owner: "s\(index)", sequenceNumber: 1, timestamp: 0, now: UInt64(index))
        }
        #expect(table.sources.count == table.limits.total)
        #expect(Self.validate(&table, ssrc: 9_999, owner: "peer", at: 1_000) == .recorded(validated: true))
        #expect(table.sources[1] == nil, "the oldest source on probation made room")
    }

    @Test func aFullTableOfTalkingSourcesRefusesANewcomerRatherThanEvictsAPeer() {
        var table = Table()
        for index in 0..<table.limits.total {
            _ = Self.validate(&table, ssrc: UInt32(index + 1), owner: "p\(index / 2)", at: UInt64(index))
        }
        let late = table.record(ssrc: 9_999, owner: "late", sequenceNumber: 1, timestamp: 0, now: 1_000)
        #expect(late == .full)
        #expect(table.sources.count == table.limits.total)
    }

    @Test func aPeerWeCalledPushesOutAStrangersValidatedSourceAndEvictionsAreReported() {
        var table = Table()
        for index in 0..<table.limits.total {
            _ = Self.validate(&table, ssrc: UInt32(index + 1), owner: "s\(index / 2)", at: UInt64(index))
        }
        #expect(table.takeEvicted().isEmpty)
        #expect(Self.validate(&table, ssrc: 9_999, owner: "called", reserved: true, at: 1_000) == .recorded(validated: true))
        #expect(table.takeEvicted() == [1], "the stranger's least recently heard source made room")
        #expect(table.takeEvicted().isEmpty)
        // A source pushed out for the owner's own newer one is reported too (its stream must stop).
        _ = Self.validate(&table, ssrc: 10_000, owner: "called", reserved: true, at: 1_002)
        _ = Self.validate(&table, ssrc: 10_001, owner: "called", reserved: true, at: 1_003)
        #expect(table.takeEvicted() == [2, 9_999])
    }

    @Test func strangersThatFellQuietForASecondMakeRoomForANewcomer() {
        var table = Table()
        for index in 0..<table.limits.total {
            _ = Self.validate(&table, ssrc: UInt32(index + 1), owner: "s\(index / 2)", at: 0)
        }
        #expect(Self.validate(&table, ssrc: 9_999, owner: "late", at: table.limits.evictableSilence - 1) == .full)
        #expect(Self.validate(&table, ssrc: 9_999, owner: "late", at: table.limits.evictableSilence) == .recorded(validated: true))
        #expect(table.takeEvicted().count == 1)
    }

    @Test func anSSRCBelongsToItsOwnerForBYEReportsAndPackets() {
        var table = Table()
        _ = Self.validate(&table, ssrc: 7, owner: "alice", at: 0)
        let hijack = table.record(ssrc: 7, owner: "mallory", sequenceNumber: 3, timestamp: 960, now: 1)
        #expect(hijack == .ownedByAnother)
        let foreignGoodbye = table.forget(ssrc: 7, owner: "mallory")
        #expect(!foreignGoodbye)
        table.noteSenderReport(ssrc: 7, owner: "mallory", ntpTimestamp: NTPTimestamp(rawValue: 1), arrivalNanoseconds: 1)
        #expect(table.sources[7]?.senderReport == nil)
        let ownGoodbye = table.forget(ssrc: 7, owner: "alice")
        #expect(ownGoodbye && table.sources.isEmpty)
    }

    @Test func sourcesLeaveWithTheirOwnerOrAfterSilence() {
        var table = Table()
        _ = Self.validate(&table, ssrc: 1, owner: "a", at: 0)
        _ = Self.validate(&table, ssrc: 2, owner: "b", at: 0)
        _ = Self.validate(&table, ssrc: 3, owner: "b", at: 4_000_000_000)
        let left = table.forget(owner: "a")
        let silent = table.expire(now: 5_000_000_000)
        let blocks = table.makeReportBlocks(now: 5_000_000_000)
        #expect(left == [1] && silent == [2])
        #expect(Array(table.sources.keys) == [3])
        #expect(blocks.map(\.ssrc) == [3])
    }
}
