/// What a receiver knows about one RTP source: sequence validity, loss and jitter
/// (RFC 3550 appendix A.1, A.3 and A.8), and the report block it sends back about it.
///
/// Arrival times are nanoseconds of any monotonic clock, passed in by the caller.
public struct ReceptionStatistics: Sendable {
    /// Sequential packets needed before a new source is believed (A.1 MIN_SEQUENTIAL).
    public static let minimumSequential = 2
    /// The largest forward jump still taken as loss rather than a restart (A.1 MAX_DROPOUT).
    public static let maximumDropout = 3000
    /// The largest backward step still taken as reordering (A.1 MAX_MISORDER).
    public static let maximumMisorder = 100
    private static let sequenceModulus = 1 << 16

    /// The source these statistics describe.
    public let ssrc: UInt32
    /// The RTP clock rate of the stream; Opus always uses 48 000 (RFC 7587).
    public let clockRate: UInt32

    private var hasSeenPacket = false
    private var probation = ReceptionStatistics.minimumSequential
    private var maximumSequence: UInt16 = 0
    private var baseSequence: UInt16 = 0
    /// The sequence number that, arriving next, confirms a large jump as a restart.
    /// Out of the 16-bit range until a jump has been seen.
    private var badSequence = ReceptionStatistics.sequenceModulus + 1
    private var cycles: Int64 = 0
    private var receivedSinceValidation: Int64 = 0
    private var expectedPrior: Int64 = 0
    private var receivedPrior: Int64 = 0
    private var previousTransit: UInt32?
    /// Jitter times 16, the integer estimator of A.8.
    private var scaledJitter: Int64 = 0

    public init(ssrc: UInt32, clockRate: UInt32 = UInt32(VoiceFormat.sampleRate)) {
        self.ssrc = ssrc
        self.clockRate = clockRate
    }

    /// Whether enough sequential packets have arrived to believe in the source.
    public var isValidated: Bool { hasSeenPacket && probation == 0 }

    /// Packets counted as received since validation, duplicates included (as A.3 does).
    public var receivedCount: Int64 { receivedSinceValidation }

    /// The highest sequence number seen, extended by the count of wraparounds.
    public var extendedHighestSequence: Int64 { cycles * Int64(Self.sequenceModulus) + Int64(maximumSequence) }

    /// Packets expected since validation (A.3).
    public var expectedCount: Int64 {
        isValidated ? extendedHighestSequence - Int64(baseSequence) + 1 : 0
    }

    /// Expected minus received: negative when duplicates outnumber losses.
    public var cumulativeLost: Int64 { expectedCount - receivedSinceValidation }

    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32 { UInt32(clamping: scaledJitter >> 4) }

    /// Interarrival jitter in nanoseconds.
    public var jitterNanoseconds: UInt64 { MediaTime.nanoseconds(frames: Int(jitter), rate: Int(max(clockRate, 1))) }

    /// Accounts for one arriving RTP packet.
    ///
    /// - Returns: whether the packet belongs to the validated stream. Packets during probation,
    ///   and the first packet after a large jump, return false.
    public mutating func record(sequenceNumber: UInt16, rtpTimestamp: UInt32, arrivalNanoseconds: UInt64) -> Bool {
        if !hasSeenPacket {
            hasSeenPacket = true
            restart(at: sequenceNumber)
            maximumSequence = sequenceNumber &- 1
            probation = Self.minimumSequential
        }
        guard updateSequence(sequenceNumber) else { return false }
        updateJitter(rtpTimestamp: rtpTimestamp, arrivalNanoseconds: arrivalNanoseconds)
        return true
    }

    /// The report block for this source, and the start of the next reporting interval.
    ///
    /// - Parameters:
    ///   - now: the current time on the clock used for arrivals.
    ///   - lastSenderReport: the last SR received from the source, if any, for LSR and DLSR.
    public mutating func makeReportBlock(now: UInt64, lastSenderReport: ReceivedSenderReport?) -> ReportBlock {
        let expected = expectedCount
        let expectedInInterval = expected - expectedPrior
        let receivedInInterval = receivedSinceValidation - receivedPrior
        expectedPrior = expected
        receivedPrior = receivedSinceValidation
        let lostInInterval = expectedInInterval - receivedInInterval
        let fractionLost: UInt8 = expectedInInterval == 0 || lostInInterval <= 0
            ? 0 : UInt8(clamping: (lostInInterval << 8) / expectedInInterval)

        let lostRange = ReportBlock.cumulativeLostRange
        return ReportBlock(
            ssrc: ssrc,
            fractionLost: fractionLost,
            cumulativeLost: Int32(min(max(cumulativeLost, Int64(lostRange.lowerBound)), Int64(lostRange.upperBound))),
            extendedHighestSequence: UInt32(truncatingIfNeeded: extendedHighestSequence),
            jitter: jitter,
            lastSenderReport: lastSenderReport?.ntpTimestamp.shortFormat ?? 0,
            delaySinceLastSenderReport: lastSenderReport.map {
                NTPShortFormat.fromNanoseconds(now >= $0.arrivalNanoseconds ? now - $0.arrivalNanoseconds : 0)
            } ?? 0
        )
    }

    /// A.1 `init_seq`.
    private mutating func restart(at sequenceNumber: UInt16) {
        baseSequence = sequenceNumber
        maximumSequence = sequenceNumber
        badSequence = Self.sequenceModulus + 1
        cycles = 0
        receivedSinceValidation = 0
        expectedPrior = 0
        receivedPrior = 0
        // A restarted sender picks a new timestamp base; its old transit time means nothing.
        previousTransit = nil
    }

    /// A.1 `update_seq`: returns whether the packet is valid.
    private mutating func updateSequence(_ sequenceNumber: UInt16) -> Bool {
        let forwardDistance = Int(sequenceNumber &- maximumSequence)
        if probation > 0 {
            if sequenceNumber == maximumSequence &+ 1 {
                probation -= 1
                maximumSequence = sequenceNumber
                if probation == 0 {
                    restart(at: sequenceNumber)
                    receivedSinceValidation += 1
                    return true
                }
            } else {
                probation = Self.minimumSequential - 1
                maximumSequence = sequenceNumber
            }
            return false
        } else if forwardDistance < Self.maximumDropout {
            if sequenceNumber < maximumSequence {
                cycles += 1
            }
            maximumSequence = sequenceNumber
        } else if forwardDistance <= Self.sequenceModulus - Self.maximumMisorder {
            guard Int(sequenceNumber) == badSequence else {
                badSequence = (Int(sequenceNumber) + 1) & (Self.sequenceModulus - 1)
                return false
            }
            // Two sequential packets after a big jump: the sender restarted without telling us.
            restart(at: sequenceNumber)
        }
        // Otherwise a duplicate or a reordered packet: counted, but the maximum stays.
        receivedSinceValidation += 1
        return true
    }

    /// A.8: the jitter estimate follows the change in transit time between consecutive packets.
    private mutating func updateJitter(rtpTimestamp: UInt32, arrivalNanoseconds: UInt64) {
        let transit = timestampUnits(nanoseconds: arrivalNanoseconds) &- rtpTimestamp
        defer { previousTransit = transit }
        guard let previousTransit else { return }
        let difference = Int64(Int32(bitPattern: transit &- previousTransit)).magnitude
        scaledJitter += Int64(difference) - ((scaledJitter + 8) >> 4)
    }

    /// Arrival time on the RTP clock, modulo 2^32 like RTP timestamps.
    private func timestampUnits(nanoseconds: UInt64) -> UInt32 {
        MediaTime.wrappingTimestamp(nanoseconds: nanoseconds, rate: Int(clockRate))
    }
}

/// The last sender report received from a source and when it arrived.
public struct ReceivedSenderReport: Equatable, Sendable {
    public var ntpTimestamp: NTPTimestamp
    /// Arrival time on the same clock as the `now` passed to `makeReportBlock`.
    public var arrivalNanoseconds: UInt64
}
