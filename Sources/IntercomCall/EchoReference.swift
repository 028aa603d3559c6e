import IntercomCore
import IntercomIO

/// Carries what the playback thread wrote to the speaker, with the time it will be heard,
/// to the capture thread, whose `EchoAlignment` lines it up with each microphone frame for the
/// echo canceller (by time, then by the signals). Neither side waits: a full ring drops frames,
/// which the timeline then treats as silence. Frames go back to the playback side once read,
/// to be filled again, so that neither side allocates once a call runs.
final class EchoReference: Sendable {
    private static let capacity = 64
    private struct PlayedFrame {
        var playTime: UInt64
        var frame: [Int16]
    }

    private let ring: RecyclingRing<PlayedFrame>

    init(frameLength: FrameLength) {
        ring = RecyclingRing(capacity: Self.capacity) {
            var frame: [Int16] = []
            frame.reserveCapacity(frameLength.samples)
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

    /// Capture side: hands `alignment` every frame played since the last call.
    func deliver(to alignment: inout EchoAlignment) {
        while let played = ring.pop() {
            alignment.played(played.frame, at: played.playTime)
            ring.giveBack(consume played)
        }
    }
}
