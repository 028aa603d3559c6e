/// The RTP sources a call hears, each owned by one peer (its address in plain RTP, its
/// device key in an encrypted call), with its reception statistics and last sender report.
///
/// Everything in it is bounded: a few sources per owner, a fixed total, and each source leaves
/// with its owner, on BYE, or after a silence. A stranger filling the table evicts its own
/// entries and those still on probation first; a validated source is pushed out for a source
/// of a peer we called (`reserved`), and for anyone's once it has been quiet for a second, so
/// strangers that stop sending cannot keep a newcomer out for the five seconds of its expiry.
public struct SourceTable<Owner: Hashable & Sendable>: Sendable {
    public struct Limits: Sendable {
        /// Sources at once; a LAN call has a handful. (Each playing source costs its stream
        /// about 100 kB: decoder, jitter buffer, resampler.)
        public var total = 32
        /// Sources one owner may have: a peer that restarts comes back with a new SSRC while
        /// its old one is still expiring.
        public var perOwner = 2
        /// A source silent this long has left.
        public var silence = MediaTime.nanoseconds(.seconds(5))
        /// A learned peer's source quiet this long may make room for a newcomer's.
        public var evictableSilence = MediaTime.nanoseconds(.seconds(1))

        public init() {}
    }

    public struct Source: Sendable {
        public var reception: ReceptionStatistics
        public let owner: Owner
        /// Its owner is a peer we called (named, discovered or authenticated), not one that
        /// made itself known.
        public let reserved: Bool
        public var lastHeard: UInt64
        public var senderReport: ReceivedSenderReport?
    }

    public enum Outcome: Equatable, Sendable {
        /// Recorded; `validated` once its sequence numbers have followed on (RFC 3550's probation).
        case recorded(validated: Bool)
        /// The SSRC belongs to another peer: dropped.
        case ownedByAnother
        /// No room, and nothing that could be evicted for it.
        case full
    }

    public let limits: Limits
    public private(set) var sources: [UInt32: Source] = [:]
    /// Sources pushed out to make room since the last `takeEvicted()`: their streams must stop too.
    private var evicted: [UInt32] = []

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Records an RTP packet of `ssrc` from `owner`; `reserved` when the owner is a peer we called.
    public mutating func record(
        ssrc: UInt32, owner: Owner, reserved: Bool = false, sequenceNumber: UInt16, timestamp: UInt32, now: UInt64
    ) -> Outcome {
        if let existing = sources[ssrc], existing.owner != owner { return .ownedByAnother }
        if sources[ssrc] == nil {
            guard makeRoom(for: owner, reserved: reserved, now: now) else { return .full }
            sources[ssrc] = Source(reception: ReceptionStatistics(ssrc: ssrc), owner: owner, reserved: reserved, lastHeard: now)
        }
        sources[ssrc]!.lastHeard = now
        let validated = sources[ssrc]!.reception.record(sequenceNumber: sequenceNumber, rtpTimestamp: timestamp, arrivalNanoseconds: now)
        return .recorded(validated: validated)
    }

    /// Keeps a sender report, only for a source of the owner that sends it.
    public mutating func noteSenderReport(ssrc: UInt32, owner: Owner, ntpTimestamp: NTPTimestamp, arrivalNanoseconds: UInt64) {
        guard sources[ssrc]?.owner == owner else { return }
        sources[ssrc]!.senderReport = ReceivedSenderReport(ntpTimestamp: ntpTimestamp, arrivalNanoseconds: arrivalNanoseconds)
    }

    public func owner(of ssrc: UInt32) -> Owner? { sources[ssrc]?.owner }

    /// BYE: only an SSRC's own owner can make it leave.
    @discardableResult
    public mutating func forget(ssrc: UInt32, owner: Owner) -> Bool {
        guard sources[ssrc]?.owner == owner else { return false }
        sources[ssrc] = nil
        return true
    }

    /// The owner left: its sources go with it. Returns their SSRCs.
    @discardableResult
    public mutating func forget(owner: Owner) -> [UInt32] {
        let gone = sources.filter { $0.value.owner == owner }.map(\.key)
        for ssrc in gone { sources[ssrc] = nil }
        return gone
    }

    /// Drops sources silent for `limits.silence`; returns their SSRCs.
    public mutating func expire(now: UInt64) -> [UInt32] {
        let silence = limits.silence
        func expired(_ source: Source) -> Bool { now > source.lastHeard && now - source.lastHeard >= silence }
        // Most seconds nothing expires: then no list is made.
        guard sources.values.contains(where: expired) else { return [] }
        let gone = sources.filter { expired($0.value) }.map(\.key)
        for ssrc in gone { sources[ssrc] = nil }
        return gone
    }

    /// One RTCP report block per validated source, by SSRC (each block starts a new interval).
    public mutating func makeReportBlocks(now: UInt64) -> [ReportBlock] {
        var blocks: [ReportBlock] = []
        makeReportBlocks(now: now, into: &blocks)
        return blocks
    }

    /// `makeReportBlocks(now:)` into `blocks`, replacing what it held: a caller that keeps it
    /// from report to report allocates nothing (nor does the ordering, for the few sources a
    /// call has: a short list is sorted in place).
    public mutating func makeReportBlocks(now: UInt64, into blocks: inout [ReportBlock]) {
        blocks.removeAll(keepingCapacity: true)
        // Each source changed where it is kept (through its index: holding the table's keys
        // while changing a value would copy the table).
        var index = sources.values.startIndex
        while index != sources.values.endIndex {
            if sources.values[index].reception.isValidated {
                let lastSenderReport = sources.values[index].senderReport
                blocks.append(sources.values[index].reception.makeReportBlock(now: now, lastSenderReport: lastSenderReport))
            }
            sources.values.formIndex(after: &index)
        }
        blocks.sort { $0.ssrc < $1.ssrc }
    }

    /// The sources pushed out to make room since the last call.
    public mutating func takeEvicted() -> [UInt32] {
        defer { evicted.removeAll() }
        return evicted
    }

    private mutating func makeRoom(for owner: Owner, reserved: Bool, now: UInt64) -> Bool {
        let own = sources.filter { $0.value.owner == owner }
        if own.count >= limits.perOwner, let oldest = own.min(by: { $0.value.lastHeard < $1.value.lastHeard }) {
            evict(oldest.key)
        }
        guard sources.count >= limits.total else { return true }
        let probation = sources.filter { !$0.value.reception.isValidated }
        let evictable = sources.filter { source in
            !source.value.reserved && (reserved || now - min(now, source.value.lastHeard) >= limits.evictableSilence)
        }
        guard let oldest = (probation.isEmpty ? evictable : probation).min(by: { $0.value.lastHeard < $1.value.lastHeard }) else {
            return false
        }
        evict(oldest.key)
        return true
    }

    private mutating func evict(_ ssrc: UInt32) {
        sources[ssrc] = nil
        evicted.append(ssrc)
    }
}
