import IntercomCore
import Testing

/// The adaptive codec changes frame length between packets (5 ms low-delay CELT, 10 ms robust
/// hybrid frames): the jitter buffer must play each packet for its own length, and keep a
/// frame of margin for FEC only while the packets may carry it.
@Suite struct MixedFrameLengthTests {
    @Test func packetsPlayForTheirOwnLengthAndALostLongFrameIsRebuiltWhole() {
        let millisecond: UInt64 = 1_000_000
        var buffer = JitterBuffer(configuration: JitterBufferConfiguration(frameLength: .milliseconds(10)))
        // 5 ms frames, then 10 ms ones, then 5 ms again; the eleventh 10 ms frame is lost.
        let lengths = Array(repeating: 240, count: 60) + Array(repeating: 480, count: 30) + Array(repeating: 240, count: 60)
        let lost = 70
        var packets: [(sequence: Int, timestamp: Int, length: Int)] = []
        var timestamp = 0
        for (index, length) in lengths.enumerated() {
            packets.append((index, timestamp, length))
            timestamp += length
        }
        // Every packet arrives 12 ms after its first sample was captured: the link is steady.
        func arrival(_ packet: (sequence: Int, timestamp: Int, length: Int)) -> UInt64 {
            UInt64(MediaTime.nanoseconds(samples: Int64(packet.timestamp))) + 12 * millisecond
        }
        var next = 0
        var now: UInt64 = 0
        var played = 0
        var decisions: [PlayoutDecision] = []
        // From the first packet played to the last.
        while decisions.filter(\.isDecode).count < lengths.count - 1, now < arrival(packets.last!) + 500 * millisecond {
            while next < packets.count, arrival(packets[next]) <= now {
                let packet = packets[next]
                if packet.sequence != lost {
                    buffer.insert(
                        sequenceNumber: UInt16(packet.sequence), timestamp: UInt32(packet.timestamp), marker: packet.sequence == 0,
                        payload: FramePayload.encode(index: packet.sequence, samples: packet.length), arrivalTime: now
                    )
                }
                next += 1
            }
            let (decision, samples) = buffer.nextFrame(now: now)
            if decision.isDecode || !decisions.isEmpty {
                decisions.append(decision)
                played += samples
            }
            now += UInt64(MediaTime.nanoseconds(samples: Int64(samples)))
        }
        #expect(decisions.filter(\.isDecode).count == lengths.count - 1)
        let recovered = decisions.compactMap { decision -> Int? in
            if case .recoverWithFEC(_, let samples) = decision { return samples }
            return nil
        }
        #expect(recovered == [480], "the lost 10 ms frame, rebuilt whole from the next packet's FEC: \(recovered)")
        // The CELT frames played with no margin; the first hybrid ones brought the margin, one
        // 10 ms frame of delay added by concealment, before the loss it is there for. Nothing
        // else inserted, nothing skipped: every sample of the stream played once.
        let fills = decisions.enumerated().filter {
            switch $0.element {
            case .conceal, .comfortSilence: true
            default: false
            }
        }
        #expect(fills.map(\.element) == [.conceal(samples: 480)], "\(fills) inside the stream")
        #expect(fills.allSatisfy { (60..<lost).contains($0.offset) }, "the margin grows where the hybrid frames begin")
        #expect(played == timestamp + 480, "\(played) samples played of the stream's \(timestamp) and the margin's 480")
    }
}
