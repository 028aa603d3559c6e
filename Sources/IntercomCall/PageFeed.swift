import IntercomCore
import Synchronization

/// A page that a running call sends in place of its microphone (a daemon asked over its
/// status socket): the recording is written here while no page plays, then handed to the
/// capture thread, which takes it frame by frame and gives the feed back at its end. The
/// capture thread neither locks nor allocates: the storage is made once, with the call
/// (untouched, it takes address space only), and the hand-over is one atomic length.
///
/// `@unchecked` for the storage, a pointer: the writer fills it only while the length is zero,
/// the capture thread reads it only while the length is not, and the length's release and
/// acquire order the two.
final class PageFeed: @unchecked Sendable {
    /// The longest page a running call sends.
    static let maximumSamples = DaemonPage.maximumSeconds * VoiceFormat.sampleRate

    private let storage: UnsafeMutableBufferPointer<Int16>
    /// The page's length while it waits or plays; zero while the feed is free. Set by the
    /// writer when free, cleared by the capture thread at the page's end.
    private let length = Atomic<Int>(0)
    /// How far the page has played. The capture thread alone uses it (relaxed); an atomic, so
    /// that nothing here is shared without one.
    private let position = Atomic<Int>(0)

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
        let start = position.load(ordering: .relaxed)
        let available = max(0, min(frame.count, count - start))
        for i in 0..<frame.count { frame[i] = i < available ? storage[start + i] : 0 }
        if start + frame.count >= count {
            position.store(0, ordering: .relaxed)
            length.store(0, ordering: .releasing)
        } else {
            position.store(start + frame.count, ordering: .relaxed)
        }
        return true
    }
}
