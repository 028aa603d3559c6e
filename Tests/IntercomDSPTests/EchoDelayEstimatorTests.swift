import Foundation
import IntercomCore
import Testing
import TestSupport

/// The echo's delay found from the signals, on real speech through seeded rooms.
@Suite struct EchoDelayEstimatorTests {
    static let frame = 240

    /// A seeded room: a direct path `delay` samples late at `gain`, then `reflections` sparse
    /// reflections decaying by 60 dB over `rt60Milliseconds`.
    struct Room {
        var delay: Int
        var gain: Float = 0.5
        var rt60Milliseconds = 300
        var reflections = 60
        var seed: UInt64 = 1

        var taps: [(offset: Int, weight: Float)] {
            var noise = SeededNoise(seed: seed)
            var taps = [(offset: 0, weight: Float(1))]
            let length = rt60Milliseconds * 48
            for _ in 0..<reflections {
                let offset = 48 + Int(noise.next() % UInt64(length))
                let decay = Float(pow(10, -3 * Double(offset) / Double(length)))
                taps.append((offset, noise.sample() * 0.5 * decay))
            }
            return taps.map { (offset: $0.offset + delay, weight: $0.weight * gain) }
        }

        /// The echo of `far` in a microphone.
        func echo(of far: [Float]) -> [Float] {
            var out = [Float](repeating: 0, count: far.count)
            for (offset, weight) in taps where offset >= 0 {
                for i in offset..<far.count { out[i] += far[i - offset] * weight }
            }
            for (offset, weight) in taps where offset < 0 {
                for i in 0..<(far.count + offset) { out[i] += far[i - offset] * weight }
            }
            return out
        }
    }

    /// Runs the estimator frame by frame; returns its answer after each frame.
    static func estimates(reference: [Float], microphone: [Float]) -> [Int?] {
        var estimator = EchoDelayEstimator(frameSamples: frame)
        var answers: [Int?] = []
        for start in stride(from: 0, to: min(reference.count, microphone.count) - frame + 1, by: frame) {
            answers.append(estimator.observe(
                reference: reference[start..<(start + frame)].map { int16(fromFloat: $0) },
                microphone: microphone[start..<(start + frame)].map { int16(fromFloat: $0) }
            ))
        }
        return answers
    }

    static func farSpeech() throws -> [Float] {
        try SpeechFixture.speech(SpeechFixture.paragraph).map { $0 * 0.6 }
    }

    static func quietNoise(count: Int, seed: UInt64) -> [Float] {
        var noise = SeededNoise(seed: seed)
        return noise.samples(count, amplitude: 0.003)
    }

    /// A delay is found within two seconds of speech, to within a millisecond, whatever the
    /// room and wherever the echo lies in the range (even before the reference).
    @Test(arguments: [(-480, 150), (0, 300), (1_680, 300), (2_880, 450), (5_760, 700), (10_080, 400)])
    func theEchosDelayIsFoundWithinTwoSecondsOfSpeech(delay: Int, rt60: Int) throws {
        let far = Array(try Self.farSpeech().prefix(48_000 * 8))
        let room = Room(delay: delay, rt60Milliseconds: rt60, seed: UInt64(delay + 10_000))
        let noise = Self.quietNoise(count: far.count, seed: 7)
        let microphone = zip(room.echo(of: far), noise).map { $0 + $1 }
        let answers = Self.estimates(reference: far, microphone: microphone)
        let firstSpeech = far.firstIndex { abs($0) > 0.01 } ?? 0
        let deadline = (firstSpeech + 2 * 48_000) / Self.frame
        let found = answers.firstIndex { $0 != nil }
        #expect(found != nil && found! <= deadline, "found after frame \(found ?? -1), deadline \(deadline)")
        let wrong = answers.compactMap { $0 }.filter { abs($0 - delay) > 48 }
        #expect(wrong.isEmpty, "\(wrong.count) estimates off: \(wrong.prefix(5)) for \(delay)")
    }

    /// No echo at all (a headset): the microphone hears its own talker and noise, never the
    /// reference, and no delay is ever given.
    @Test func withoutAnEchoThereIsNoEstimate() throws {
        let far = Array(try Self.farSpeech().prefix(48_000 * 8))
        let near = try SpeechFixture.speech(SpeechFixture.paragraph, voice: .female).prefix(far.count)
        let noise = Self.quietNoise(count: far.count, seed: 9)
        let microphone = zip(near, noise).map { $0 * 0.5 + $1 }
        let answers = Self.estimates(reference: far, microphone: Array(microphone))
        #expect(answers.allSatisfy { $0 == nil }, "\(answers.compactMap { $0 }.prefix(5))")
    }

    /// The near end talking as loud as the echo for seconds never gives a wrong delay.
    @Test func doubleTalkNeverGivesAWrongDelay() throws {
        let far = Array(try Self.farSpeech().prefix(48_000 * 10))
        let delay = 2_400
        let echo = Room(delay: delay).echo(of: far)
        let near = try SpeechFixture.speech(SpeechFixture.sentence, voice: .female)
        var microphone = zip(echo, Self.quietNoise(count: far.count, seed: 3)).map { $0 + $1 }
        let start = 4 * 48_000
        for (index, sample) in near.enumerated() where start + index < microphone.count {
            microphone[start + index] += sample * 0.6
        }
        let answers = Self.estimates(reference: far, microphone: microphone)
        let wrong = answers.compactMap { $0 }.filter { abs($0 - delay) > 48 }
        #expect(wrong.isEmpty, "\(wrong.count) wrong estimates, first \(wrong.prefix(5))")
        #expect(answers.contains { $0 != nil })
    }

    /// The echo path jumps in mid-speech (an underrun, a capture that skipped), later or
    /// earlier: the new delay is given within three quarters of a second of speech (0.3 to
    /// 0.6 s here), and the old one not after that.
    @Test(arguments: [(1_440, 2_400), (2_400, 1_680), (4_800, 4_560)])
    func aMoveOfTheEchoIsFoundWithinThreeQuartersOfASecond(from: Int, to: Int) throws {
        let far = Array(try Self.farSpeech().prefix(48_000 * 12))
        let before = Room(delay: from).echo(of: far)
        let after = Room(delay: to).echo(of: far)
        let change = 6 * 48_000
        let noise = Self.quietNoise(count: far.count, seed: 5)
        let microphone = (0..<far.count).map { ($0 < change ? before[$0] : after[$0]) + noise[$0] }
        let answers = Self.estimates(reference: far, microphone: microphone)
        let changeFrame = change / Self.frame
        let found = answers[..<changeFrame].last ?? nil
        #expect(found != nil && abs(found! - from) <= 48, "\(found ?? -1) before the move")
        let followed = answers[changeFrame...].firstIndex { $0 != nil && abs($0! - to) <= 48 }
        #expect(followed != nil && followed! - changeFrame <= 150, "followed after \(followed.map { $0 - changeFrame } ?? -1) frames")
        if let followed {
            let wrong = answers[followed...].compactMap { $0 }.filter { abs($0 - to) > 48 }
            #expect(wrong.isEmpty, "after the move: \(wrong.count) off, \(Set(wrong).sorted())")
        }
    }
}
