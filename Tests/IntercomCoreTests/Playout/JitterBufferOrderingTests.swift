import IntercomCore
import Testing

/// Arrival times given as data: the jitter buffer alone, driven by a playout clock that advances by what it plays.
/// The delay is pinned to 50 ms (minimum 50, maximum 60), so a packet is in time if it arrives
/// at most 50 ms after its fastest expected arrival, and the expected output follows by hand.
struct JitterBufferOrderingTests {
    struct Row: CustomTestStringConvertible {
        let name: String
        /// Arrival (ms) of each packet, by index; a missing index was lost. Packet i is sent at 10·i ms.
        let arrivals: [(index: Int, milliseconds: UInt64)]
        /// Everything rendered except silence, in order, before the 100 ms of concealment that follows the last packet.
        let expected: [RenderedFrame]
        let late: Int
        let duplicated: Int
        let lost: Int
        var testDescription: String { name }
    }

    static let frames = 16

    /// Packet i arrives 5 ms after it is sent, except where `changes` says otherwise (nil: lost).
    static func arrivals(_ changes: [Int: UInt64?] = [:], extra: [(Int, UInt64)] = []) -> [(index: Int, milliseconds: UInt64)] {
        let regular: [(index: Int, milliseconds: UInt64)] = (0..<frames).compactMap { index in
            let arrival = changes[index] ?? (UInt64(index) * 10 + 5)
            return arrival.map { (index, $0) }
        }
        return regular + extra.map { (index: $0.0, milliseconds: $0.1) }
    }

    static func decoded(_ indices: some Sequence<Int>) -> [RenderedFrame] { indices.map { .decoded($0) } }

    static let rows: [Row] = [
        Row(name: "in order", arrivals: arrivals(), expected: decoded(0..<frames), late: 0, duplicated: 0, lost: 0),
        Row(name: "adjacent packets swapped", arrivals: arrivals([4: 56]), expected: decoded(0..<frames), late: 0, duplicated: 0, lost: 0),
        Row(name: "packet displaced by 3", arrivals: arrivals([5: 86]), expected: decoded(0..<frames), late: 0, duplicated: 0, lost: 0),
        Row(
            name: "duplicates, while buffered and after playout",
            arrivals: arrivals(extra: [(6, 67), (3, 300)]), expected: decoded(0..<frames), late: 0, duplicated: 2, lost: 0
        ),
        Row(
            name: "late packet: recovered from the next one's FEC, then dropped",
            arrivals: arrivals([7: 175]), expected: decoded(0..<7) + [.recovered(7)] + decoded(8..<frames), late: 1, duplicated: 0, lost: 0
        ),
        Row(
            name: "two lost: concealed, then FEC",
            arrivals: arrivals([7: nil, 8: nil]), expected: decoded(0..<7) + [.concealed, .recovered(8)] + decoded(9..<frames),
            late: 0, duplicated: 0, lost: 2
        ),
        Row(
            name: "late and lost together",
            arrivals: arrivals([10: 400, 11: nil]), expected: decoded(0..<10) + [.concealed, .recovered(11)] + decoded(12..<frames),
            late: 1, duplicated: 0, lost: 1
        ),
    ]

    @Test(arguments: rows)
    func playsInOrderWithRightCounters(_ row: Row) {
        let configuration = JitterBufferConfiguration(minimumDelay: 50 * millisecond, maximumDelay: 60 * millisecond)
        var buffer = JitterBuffer(configuration: configuration)
        let sender = FakeSender().packets(slots: Self.frames)
        let arrivals = row.arrivals.sorted { $0.milliseconds < $1.milliseconds }
        var nextArrival = 0
        var rendered: [RenderedFrame] = []
        var now: UInt64 = 0
        while now < 500 * millisecond {
            while nextArrival < arrivals.count, arrivals[nextArrival].milliseconds * millisecond <= now {
                let packet = sender[arrivals[nextArrival].index]
                buffer.insert(
                    sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp, marker: packet.marker,
                    payload: packet.payload, arrivalTime: arrivals[nextArrival].milliseconds * millisecond
                )
                nextArrival += 1
            }
            let (decision, samples) = buffer.nextFrame(now: now)
            switch decision {
            case .decode(let payload): rendered.append(.decoded(FramePayload.decode(payload).index))
            case .recoverWithFEC(let next, _): rendered.append(.recovered(FramePayload.decode(next).index - 1))
            case .conceal: rendered.append(.concealed)
            case .comfortSilence: break
            }
            // The playout clock moves on by what was just played.
            now += MediaTime.nanoseconds(frames: samples, rate: VoiceFormat.sampleRate)
        }
        // After the last packet the stream conceals for 100 ms (10 frames), then goes silent.
        #expect(rendered == row.expected + Array(repeating: .concealed, count: 10))
        let statistics = buffer.statistics
        #expect(statistics.late == row.late)
        #expect(statistics.duplicated == row.duplicated)
        #expect(statistics.lost == row.lost)
        #expect(statistics.received == Set(row.arrivals.map(\.index)).count)
        #expect(statistics.targetDelay == 50 * millisecond)
    }

    @Test func startsPlayingExactlyAtTheTargetDelay() {
        var buffer = JitterBuffer(configuration: JitterBufferConfiguration(minimumDelay: 50 * millisecond))
        let packet = FakeSender().packets(slots: 1)[0]
        buffer.insert(sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp, marker: true, payload: packet.payload, arrivalTime: 7 * millisecond)
        var now = 7 * millisecond
        var silence = 0
        while case .comfortSilence(let samples) = buffer.nextFrame(now: now).decision {
            silence += samples
            now += MediaTime.nanoseconds(frames: samples, rate: VoiceFormat.sampleRate)
        }
        #expect(silence == 2_400)
        #expect(buffer.currentDelay == 50 * millisecond)
    }
}
