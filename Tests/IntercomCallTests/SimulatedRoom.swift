import Foundation
import IntercomCore
import IntercomIO

/// A room with a speaker and a microphone, paced like a sound card: what the speaker plays
/// comes back into the microphone after `echoDelay` samples, attenuated and smeared by a
/// short impulse response, mixed with what the person in the room says.
final class SimulatedRoom: @unchecked Sendable {
    private let lock = NSLock()
    private var played: [Float] = []
    private var captured = 0
    let echoDelay: Int
    let echoGain: Float
    /// What the person in the room says, from `nearSpeechStart` (in samples) on.
    let nearSpeech: [Float]
    let nearSpeechStart: Int
    private let taps: [(Int, Float)] = [(0, 1.0), (41, 0.4), (113, -0.25), (307, 0.1)]

    init(echoDelayMilliseconds: Int, echoGain: Float, nearSpeech: [Float] = [], nearSpeechStart: Int = 0) {
        echoDelay = echoDelayMilliseconds * 48
        self.echoGain = echoGain
        self.nearSpeech = nearSpeech
        self.nearSpeechStart = nearSpeechStart
    }

    fileprivate func play(_ frame: [Float]) {
        lock.withLock { played += frame }
    }

    fileprivate func capture(into frame: inout [Int16]) {
        lock.withLock {
            for i in frame.indices {
                let index = captured + i
                var sample: Float = 0
                for (offset, weight) in taps {
                    let source = index - echoDelay - offset
                    if source >= 0, source < played.count { sample += played[source] * weight * echoGain }
                }
                let near = index - nearSpeechStart
                if near >= 0, near < nearSpeech.count { sample += nearSpeech[near] }
                frame[i] = int16(fromFloat: sample)
            }
            captured += frame.count
        }
    }

    var microphone: AudioSource { RoomMicrophone(room: self) }
    var speaker: AudioSink { RoomSpeaker(room: self) }
}

/// Paces frames on the monotonic clock, one frame period apart (frames of any length).
private struct Pacing {
    var start: UInt64?
    /// Samples paced so far, and the length of the last frame.
    var samples: Int64 = 0
    var frameSamples: Int64 = 480

    mutating func wait(offset: Int64, frameSamples: Int) -> WallClockTime? {
        self.frameSamples = Int64(frameSamples)
        var first: WallClockTime?
        if start == nil {
            start = SystemClock.monotonicNanoseconds()
            first = SystemClock.wallClockNow()
        }
        SystemClock.sleep(untilMonotonic: due(offset: offset)!)
        samples += Int64(frameSamples)
        return first
    }

    /// When frame `offset` frames from the next one is due.
    func due(offset: Int64) -> UInt64? {
        start.map { UInt64(Int64($0) + MediaTime.nanoseconds(samples: samples + offset * frameSamples)) }
    }

    func untilNext() -> UInt64 {
        guard let due = due(offset: 0) else { return 0 }
        let now = SystemClock.monotonicNanoseconds()
        return due > now ? due - now : 0
    }
}

private final class RoomMicrophone: AudioSource {
    let room: SimulatedRoom
    var pacing = Pacing()
    var firstSampleTime: WallClockTime?
    var delayNanoseconds: UInt64 { 0 }
    var lastFrameCaptureTime: MonotonicInstant? { pacing.due(offset: -1).map(MonotonicInstant.init) }

    init(room: SimulatedRoom) { self.room = room }

    func read(into frame: inout [Int16]) throws(AudioEndpointError) -> Bool {
        if let first = pacing.wait(offset: 1, frameSamples: frame.count) { firstSampleTime = first }
        room.capture(into: &frame)
        return true
    }
}

private final class RoomSpeaker: AudioSink {
    let room: SimulatedRoom
    var pacing = Pacing()
    var firstSampleTime: WallClockTime?
    var delayNanoseconds: UInt64 { pacing.untilNext() }
    var nextFramePlayTime: MonotonicInstant? { pacing.due(offset: 0).map(MonotonicInstant.init) }

    init(room: SimulatedRoom) { self.room = room }

    func write(_ frame: [Float]) throws(AudioEndpointError) {
        if let first = pacing.wait(offset: 0, frameSamples: frame.count) { firstSampleTime = first }
        room.play(frame)
    }

    func close() {}
}
