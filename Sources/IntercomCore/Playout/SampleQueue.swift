/// A FIFO of samples kept contiguous, so its front can be handed to a resampler as one buffer.
///
/// Consumed samples are reclaimed by moving the rest to the front before the next append; once
/// the queue has reached its working size, nothing is allocated.
struct SampleQueue {
    private var storage: [Float] = []
    private var start = 0

    init(reservingCapacity capacity: Int) {
        storage.reserveCapacity(capacity)
    }

    /// Samples waiting.
    var count: Int { storage.count - start }

    mutating func append(contentsOf samples: [Float]) {
        compact()
        storage.append(contentsOf: samples)
    }

    mutating func appendSilence(_ count: Int) {
        compact()
        storage.append(contentsOf: repeatElement(0, count: count))
    }

    mutating func removeFirst(_ count: Int) {
        start += min(count, self.count)
    }

    /// Calls `body` with the waiting samples, oldest first.
    func withSamples<Result>(_ body: (UnsafeBufferPointer<Float>) -> Result) -> Result {
        storage.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[start...])) }
    }

    private mutating func compact() {
        guard start > 0 else { return }
        storage.removeSubrange(0..<start)
        start = 0
    }
}
