import IntercomCore
import IntercomIO

/// Carries what the playback thread wrote to the speaker, with the time it will be heard,
/// to the capture thread, which lines it up with each microphone frame for the echo
/// canceller (`EchoAlignment`: by time, then by the signals). Neither side waits: a full ring drops frames,
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
    private var alignment: EchoAlignment

    init(frameSamples: Int, tailMilliseconds: Int) {
        alignment = EchoAlignment(frameSamples: frameSamples, tailMilliseconds: tailMilliseconds)
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

    /// Times the reference re-synced with the devices' timestamps, and times it moved to
    /// follow the echo the signals found (capture side).
    var resyncs: Int { alignment.resyncs }
    var corrections: Int { alignment.corrections }
    var lastMove: EchoMove? { alignment.lastMove }
    var refusedEstimates: Int { alignment.refusedEstimates }
    /// The echo's delay behind the reference, once the signals have found it (capture side).
    var echoDelaySamples: Int? { alignment.echoDelaySamples }

    /// Capture side: the reference for `microphone`, whose first sample was captured at
    /// `captureTime`, in `reference` (kept by the caller).
    func reference(for microphone: [Int16], capturedAt captureTime: UInt64, into reference: inout [Int16]) {
        while let played = ring.pop() {
            alignment.played(played.frame, at: played.playTime)
            ring.giveBack(consume played)
        }
        alignment.reference(for: microphone, capturedAt: captureTime, into: &reference)
    }

    /// Capture side: the canceller's prediction of the echo in the frame last given to
    /// `reference(for:)`, by which small moves of the echo are found and followed.
    func echoPredicted(_ prediction: [Int16]) {
        alignment.echoPredicted(prediction)
    }
}
