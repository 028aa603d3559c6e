import IntercomCore
import Synchronization

/// A page that a running call sends in place of its microphone (a daemon asked over its
/// status socket): the recording is written here while no page plays, then handed to the
/// capture thread, which takes it frame by frame and gives the feed back at its end. The
/// capture thread neither locks nor allocates: the storage is made once, with the call
/// (untouched, it takes address space only), and the hand-over is one atomic length.
final class PageFeed: @unchecked Sendable {
    /// The longest page a running call sends.
    static let maximumSamples = DaemonPage.maximumSeconds * VoiceFormat.sampleRate

    private let storage: UnsafeMutableBufferPointer<Int16>
    /// The page's length while it waits or plays; zero while the feed is free. Set by the
    /// writer when free, cleared by the capture thread at the page's end.
    private let length = Atomic<Int>(0)
    /// Capture thread only: how far the page has played.
    private var position = 0

    init() {
        storage = .allocate(capacity: Self.maximumSamples)
    }

    deinit { storage.deallocate() }

    /// Whether a page waits or plays.
    var isBusy: Bool { length.load(ordering: .acquiring) != 0 }

    /// Hands `samples` (at most `maximumSamples`, 48 kHz mono) to the capture thread; false
    /// while another page plays. One writer at a time.
    func offer(_ samples: [Int16]) -> Bool {
        precondition(samples.count <= Self.maximumSamples)
        guard !samples.isEmpty, !isBusy else { return false }
        _ = storage.update(fromContentsOf: samples)
        length.store(samples.count, ordering: .releasing)
        return true
    }

    /// Capture thread: fills `frame` with the page's next samples (silence after its end);
    /// false when no page plays.
    func next(into frame: inout [Int16]) -> Bool {
        let count = length.load(ordering: .acquiring)
        guard count > 0 else { return false }
        let available = max(0, min(frame.count, count - position))
        for i in 0..<frame.count { frame[i] = i < available ? storage[position + i] : 0 }
        position += frame.count
        if position >= count {
            position = 0
            length.store(0, ordering: .releasing)
        }
        return true
    }
}
