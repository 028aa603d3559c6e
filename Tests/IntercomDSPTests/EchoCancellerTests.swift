import Glibc
import IntercomCore
import IntercomDSP
import Testing
import TestSupport

@Suite struct EchoCancellerTests {
    static let frame = 480

    /// A room in miniature: a delay, an attenuation and a short impulse response.
    static func echo(of far: [Float], delayMilliseconds: Int, gain: Float) -> [Float] {
        let delay = delayMilliseconds * 48
        let taps: [(Int, Float)] = [(0, 1.0), (37, 0.45), (91, -0.3), (230, 0.15), (611, 0.08)]
        var out = [Float](repeating: 0, count: far.count)
        for (offset, weight) in taps {
            for i in (delay + offset)..<far.count { out[i] += far[i - delay - offset] * weight * gain }
        }
        return out
    }

    /// Runs canceller and preprocessor over whole signals, frame by frame.
    static func cancel(near: [Float], far: [Float], tailMilliseconds: Int = 200) throws -> [Float] {
        let canceller = try EchoCanceller(frameLength: FrameLength(samples: frame), tailMilliseconds: tailMilliseconds)
        var configuration = PreprocessorConfiguration()
        configuration.automaticGainControl = false
        configuration.denoise = true
        let preprocessor = try Preprocessor(frameLength: FrameLength(samples: frame), configuration: configuration, echoCanceller: canceller)
        var output: [Float] = []
        for start in stride(from: 0, to: near.count - frame + 1, by: frame) {
            let capture = near[start..<(start + frame)].map { int16(fromFloat: $0) }
            let reference = far[start..<(start + frame)].map { int16(fromFloat: $0) }
            var cleaned = try canceller.cancel(capture: capture, reference: reference)
            try preprocessor.process(&cleaned)
            output += cleaned.map { float(fromInt16: $0) }
        }
        return output
    }

    @Test(arguments: [20, 40, 60])
    func echoIsReducedByAtLeast20dBAfterConvergence(delayMilliseconds: Int) throws {
        let far = try SpeechFixture.speech(voice: .male).map { $0 * 0.6 }
        let near = Self.echo(of: far, delayMilliseconds: delayMilliseconds, gain: 0.5)
        let output = try Self.cancel(near: near, far: far)
        // Judge the second half, after the adaptive filter converged.
        let half = output.count / 2
        let erle = SignalMeasures.decibels(
            SignalMeasures.energy(near[half..<output.count]), over: SignalMeasures.energy(output[half...])
        )
        #expect(erle >= 20, "ERLE \(erle) dB at \(delayMilliseconds) ms")
    }

    @Test func doubleTalkKeepsTheNearEndSpeech() throws {
        let far = try SpeechFixture.speech(voice: .male).map { $0 * 0.6 }
        let nearSpeech = try SpeechFixture.speech(SpeechFixture.sentence, voice: .female).map { $0 * 0.5 }
        let echo = Self.echo(of: far, delayMilliseconds: 40, gain: 0.5)
        // The near end starts talking once the canceller had time to converge.
        let start = far.count / 2
        var near = echo
        for (i, s) in nearSpeech.enumerated() where start + i < near.count { near[start + i] += s }
        let output = try Self.cancel(near: near, far: far)

        let span = start..<min(start + nearSpeech.count, output.count)
        let kept = SignalMeasures.energy(output[span])
        let spoken = SignalMeasures.energy(nearSpeech.prefix(span.count))
        let change = SignalMeasures.decibels(kept, over: spoken)
        #expect(change > -6, "near-end speech changed by \(change) dB during double-talk")
        // What is kept is the near-end speech, not the echo.
        let alignment = SignalMeasures.bestAlignment(of: nearSpeech, in: Array(output[start...]), lags: 0...1000)
        #expect(alignment.correlation > 0.7, "correlation with near-end speech \(alignment)")
    }

    /// The canceller alone over whole signals: what it leaves of `near`'s last half, in dB
    /// below `near` there.
    static func reductionOfLastHalf(near: [Float], far: [Float], cancelsDistortion: Bool) throws -> Double {
        let canceller = try EchoCanceller(frameLength: FrameLength(samples: frame), tailMilliseconds: 100,
                                          cancelsDistortion: cancelsDistortion)
        var output: [Float] = []
        for start in stride(from: 0, to: near.count - frame + 1, by: frame) {
            let capture = near[start..<(start + frame)].map { int16(fromFloat: $0) }
            let reference = far[start..<(start + frame)].map { int16(fromFloat: $0) }
            output += try canceller.cancel(capture: capture, reference: reference).map { float(fromInt16: $0) }
        }
        let half = output.count / 2
        return SignalMeasures.decibels(SignalMeasures.energy(near[half..<output.count]), over: SignalMeasures.energy(output[half...]))
    }

    /// While the far end has long been silent the microphone passes through SpeexDSP's
    /// canceller untouched, so it is not run: the microphone goes out as it came, and the
    /// filter keeps what it learned, so the far end's next word is cancelled from its first block.
    @Test(arguments: [false, true])
    func aSilentFarEndCostsNothingAndForgetsNothing(cancelsDistortion: Bool) throws {
        let far = try SpeechFixture.speech(voice: .male).map { $0 * 0.6 }
        let silence = 4 * VoiceFormat.sampleRate
        let resumed = VoiceFormat.sampleRate / 2
        // Between its words the far end's speaker plays comfort noise of ±2 (`SilentFarEnd`).
        var comfort = SeededNoise(seed: 7)
        let farEnd = far + comfort.samples(silence, amplitude: 2.5 / 32768) + far[0..<resumed]
        // The near end's room: a quiet noise (−63 dBFS RMS).
        var noise = SeededNoise(seed: 29)
        let room = noise.samples(farEnd.count, amplitude: 0.0012)
        let echo = Self.echo(of: farEnd, delayMilliseconds: 20, gain: 0.5)
        let near = zip(echo, room).map { $0 + $1 }

        func run(_ near: [Float], _ far: [Float]) throws -> (output: [Float], idleBlocks: Int) {
            let canceller = try EchoCanceller(frameLength: FrameLength(samples: Self.frame), tailMilliseconds: 100,
                                              cancelsDistortion: cancelsDistortion)
            var output: [Float] = []
            for start in stride(from: 0, to: near.count - Self.frame + 1, by: Self.frame) {
                let capture = near[start..<(start + Self.frame)].map { int16(fromFloat: $0) }
                let reference = far[start..<(start + Self.frame)].map { int16(fromFloat: $0) }
                output += try canceller.cancel(capture: capture, reference: reference).map { float(fromInt16: $0) }
            }
            return (output, canceller.idleBlocks)
        }
        let (output, idleBlocks) = try run(near, farEnd)

        // The silence, from the echo's end and a pause's length on, came out as it went in.
        let pauseBlocks = EchoCanceller.pauseMilliseconds * 48 / Self.frame + 1
        let passed = (far.count + 20 * 48 + 611 + Self.frame) / Self.frame + pauseBlocks
        #expect(idleBlocks >= silence / Self.frame - pauseBlocks - 3, "idle blocks: \(idleBlocks)")
        // Up to the block the far end speaks again in.
        let untouched = (passed * Self.frame)..<((far.count + silence) / Self.frame * Self.frame)
        let quantised = near[untouched].map { float(fromInt16: int16(fromFloat: $0)) }
        let firstChanged = zip(output[untouched], quantised).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstChanged == nil, "changed from sample \(firstChanged ?? 0) of \(untouched), idle blocks \(idleBlocks)")

        // The far end's next half second: cancelled as well as before the silence, where a
        // canceller that has not heard this room yet cancels little.
        let after = (far.count + silence)..<output.count
        let heard = SignalMeasures.energy(near[after])
        let kept = SignalMeasures.decibels(heard, over: SignalMeasures.energy(output[after]))
        let fresh = try run(Array(near[after]), Array(farEnd[after])).output
        let learning = SignalMeasures.decibels(heard, over: SignalMeasures.energy(fresh))
        #expect(kept >= learning + 10, "after the silence \(kept) dB, a new canceller \(learning) dB")
    }

    /// A small speaker played loud flattens its peaks (soft clipping from −10 dBFS): the
    /// linear canceller leaves that part of the echo, and with the speaker's distortion
    /// modelled it cancels more (19.0 dB against 26.2 here). Through a speaker that does not
    /// distort the model costs: the second filter adds its own error (37.8 dB against 28.2
    /// here): `--no-echo-distortion` is there for such a speaker.
    @Test func theEchoOfASpeakerThatDistortsIsCancelledToo() throws {
        let far = try SpeechFixture.speech(voice: .male).map { $0 * 0.6 }
        let knee: Float = 0.3
        let played = far.map { knee * tanhf($0 / knee) }
        let distorted = Self.echo(of: played, delayMilliseconds: 20, gain: 0.5)
        let linear = try Self.reductionOfLastHalf(near: distorted, far: far, cancelsDistortion: false)
        let modelled = try Self.reductionOfLastHalf(near: distorted, far: far, cancelsDistortion: true)
        #expect(modelled >= linear + 5, "distorted speaker: \(linear) dB linear, \(modelled) dB modelled")
        let clean = Self.echo(of: far, delayMilliseconds: 20, gain: 0.5)
        let cleanModelled = try Self.reductionOfLastHalf(near: clean, far: far, cancelsDistortion: true)
        #expect(cleanModelled >= 25, "clean speaker: \(cleanModelled) dB modelled")
    }
}
