import IntercomCore

/// Drives a `ReceiveStream` like a playback device: a pull of `pullSamples` every 10 ms of the
/// receiver's clock, after handing it every packet that has arrived by then.
struct PlayoutSimulation {
    var pullSamples = 480
    /// Receiver-clock time of the first pull.
    var start: UInt64 = 1_000_000_000
    var pullPeriod: UInt64 { MediaTime.nanoseconds(frames: pullSamples, rate: VoiceFormat.sampleRate) }

    /// What a test may look at after each pull.
    struct Pull {
        let index: Int
        let now: UInt64
        let output: [Float]
    }

    /// Runs `pulls` pulls; returns the total number of samples produced.
    @discardableResult
    func run(
        _ stream: ReceiveStream,
        deliveries: [Delivery],
        pulls: Int,
        afterInsert: (Delivery) -> Void = { _ in },
        afterPull: (Pull) -> Void = { _ in }
    ) -> Int {
        var nextDelivery = deliveries.startIndex
        var produced = 0
        for index in 0..<pulls {
            let now = start + UInt64(index) * pullPeriod
            while nextDelivery < deliveries.endIndex, deliveries[nextDelivery].arrival <= now {
                let delivery = deliveries[nextDelivery]
                stream.insert(
                    sequenceNumber: delivery.packet.sequenceNumber, timestamp: delivery.packet.timestamp,
                    marker: delivery.packet.marker, payload: delivery.packet.payload, arrivalTime: delivery.arrival
                )
                afterInsert(delivery)
                nextDelivery += 1
            }
            let output = stream.pull(count: pullSamples, now: now)
            produced += output.count
            afterPull(Pull(index: index, now: now, output: output))
        }
        return produced
    }

    /// Enough pulls to play everything in `deliveries` with time to spare.
    func pulls(toDrain deliveries: [Delivery]) -> Int {
        let last = deliveries.map(\.arrival).max() ?? start
        return Int((last - start) / pullPeriod) + 100
    }
}
