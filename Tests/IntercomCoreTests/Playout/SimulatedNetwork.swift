import IntercomCore

/// How packets are lost in the simulated network.
enum LossModel {
    case none
    /// Each packet independently.
    case random(rate: Double)
    /// Gilbert–Elliott: a good state without loss and a bad state losing everything; bursts last `meanBurst` packets on average.
    case bursts(rate: Double, meanBurst: Double)
}

/// Impairments of the simulated network between the fake sender and the receiver.
struct NetworkConditions {
    /// One-way delay of every packet.
    var baseDelay: UInt64 = 20_000_000
    /// Extra delay drawn uniformly from 0...jitter per packet (reorders packets when larger than a frame).
    var jitter: UInt64 = 0
    var loss: LossModel = .none
    /// Probability that a packet also arrives a second time, `duplicateDelay` after the first copy.
    var duplicateRate = 0.0
    var duplicateDelay: UInt64 = 5_000_000
    /// Probability that a packet is held back by `lateSpikeDelay` more (a late spike).
    var lateSpikeRate = 0.0
    var lateSpikeDelay: UInt64 = 0
    /// Extra delay for given packet indices (explicit reordering).
    var displacements: [Int: UInt64] = [:]
    /// The first and last packets always arrive, so received + lost can be compared with what was sent.
    var protectedEnds = 3
}

/// The receiver's clock: runs `drift` faster than the sender's (e.g. 500e-6 = +500 ppm), from `offset`.
struct ReceiverClock {
    var drift = 0.0
    var offset: UInt64 = 1_000_000_000

    /// Receiver-clock reading at a true (sender-clock) time.
    func reading(atTrueTime time: UInt64) -> UInt64 {
        offset + UInt64((Double(time) * (1 + drift)).rounded())
    }
}

/// A packet arriving at the receiver.
struct Delivery {
    /// Arrival time on the receiver's clock.
    let arrival: UInt64
    let packet: SentPacket
}

/// The outcome of sending packets through the simulated network.
struct NetworkRun {
    /// Arrivals sorted by time (ties keep sending order).
    var deliveries: [Delivery]
    /// Indices of packets that never arrived.
    var lostIndices: Set<Int>
    /// How many extra copies arrived.
    var duplicates: Int

    init(packets: [SentPacket], conditions: NetworkConditions, clock: ReceiverClock, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var deliveries: [Delivery] = []
        lostIndices = []
        duplicates = 0
        var inBurst = false
        for packet in packets {
            let isProtected = packet.index < conditions.protectedEnds || packet.index >= packets.count - conditions.protectedEnds
            if Self.isLost(conditions.loss, inBurst: &inBurst, random: &random), !isProtected {
                lostIndices.insert(packet.index)
                continue
            }
            var delay = conditions.baseDelay + (conditions.displacements[packet.index] ?? 0)
            if conditions.jitter > 0 { delay += UInt64.random(in: 0...conditions.jitter, using: &random) }
            if random.chance(conditions.lateSpikeRate) { delay += conditions.lateSpikeDelay }
            deliveries.append(Delivery(arrival: clock.reading(atTrueTime: packet.sendTime + delay), packet: packet))
            if random.chance(conditions.duplicateRate) {
                duplicates += 1
                deliveries.append(Delivery(arrival: clock.reading(atTrueTime: packet.sendTime + delay + conditions.duplicateDelay), packet: packet))
            }
        }
        self.deliveries = deliveries.enumerated()
            .sorted { ($0.element.arrival, $0.offset) < ($1.element.arrival, $1.offset) }
            .map(\.element)
    }

    private static func isLost(_ model: LossModel, inBurst: inout Bool, random: inout SeededGenerator) -> Bool {
        switch model {
        case .none:
            return false
        case .random(let rate):
            return random.chance(rate)
        case .bursts(let rate, let meanBurst):
            // Stationary loss rate = enter / (enter + leave), with leave = 1 / meanBurst.
            let leave = 1 / meanBurst
            let enter = rate * leave / (1 - rate)
            inBurst = inBurst ? !random.chance(leave) : random.chance(enter)
            return inBurst
        }
    }
}
