import IntercomCore
import IntercomIO

/// Carries what the playback thread wrote to the speaker, with the time it will be heard,
/// to the capture thread, which lines it up with each microphone frame by time for the
/// echo canceller (`EchoReferenceTimeline`). Neither side waits: a full ring drops frames,
/// which the timeline then treats as silence.
final class EchoReference: @unchecked Sendable {
    private let ring = SPSCRing<(playTime: UInt64, frame: [Int16])>(capacity: 64)
    /// Owned by the capture thread.
    private var timeline: EchoReferenceTimeline

    init(frameSamples: Int) {
        timeline = EchoReferenceTimeline(frameSamples: frameSamples)
    }

    /// Playback side: a frame about to be written, heard from `playTime` on.
    func played(_ frame: [Float], at playTime: UInt64) {
        ring.push((playTime, frame.map(int16(fromFloat:))))
    }

    /// Capture side: the reference for the microphone frame whose first sample was captured
    /// at `captureTime`.
    func reference(capturedAt captureTime: UInt64) -> [Int16] {
        while let (playTime, frame) = ring.pop() { timeline.played(frame, at: playTime) }
        return timeline.reference(capturedAt: captureTime)
    }
}
