import IntercomCore
import IntercomIO

/// Carries what the playback thread wrote to the speaker, with the time it will be heard,
/// to the capture thread, which lines it up with each microphone frame by time for the
/// echo canceller (`EchoReferenceTimeline`). Neither side waits: a full ring drops frames,
/// which the timeline then treats as silence. Frames go back to the playback side once read,
/// to be filled again, so that neither side allocates once a call runs.
final class EchoReference: @unchecked Sendable {
    private static let capacity = 64
    private struct PlayedFrame {
        var playTime: UInt64
        var frame: [Int16]
    }

    private let ring: RecyclingRing<PlayedFrame>
    /// Owned by the capture thread.
    private var timeline: EchoReferenceTimeline

    init(frameSamples: Int) {
        timeline = EchoReferenceTimeline(frameSamples: frameSamples)
        ring = RecyclingRing(capacity: Self.capacity) {
            var frame: [Int16] = []
            frame.reserveCapacity(frameSamples)
            return PlayedFrame(playTime: 0, frame: frame)
        }
    }

    /// Playback side: a frame about to be written, heard from `playTime` on.
    func played(_ frame: [Float], at playTime: UInt64) {
        // A full ring means nobody reads the reference (no echo cancelling): the frame would be dropped.
        guard ring.count < Self.capacity else { return }
        var converted = ring.reusable()?.frame ?? []
        converted.removeAll(keepingCapacity: true)
        converted.reserveCapacity(frame.count)
        for sample in frame { converted.append(int16(fromFloat: sample)) }
        ring.push(PlayedFrame(playTime: playTime, frame: converted))
    }

    /// Times the reference re-synced with the devices (capture side).
    var resyncs: Int { timeline.resyncs }

    /// Capture side: the reference for the microphone frame whose first sample was captured
    /// at `captureTime`, in `reference` (kept by the caller).
    func reference(capturedAt captureTime: UInt64, into reference: inout [Int16]) {
        while let played = ring.pop() {
            timeline.played(played.frame, at: played.playTime)
            ring.giveBack(consume played)
        }
        timeline.reference(capturedAt: captureTime, into: &reference)
    }
}
