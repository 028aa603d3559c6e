import Foundation
import IntercomCore
import IntercomDSP
import Testing
import TestSupport

/// The residual echo suppressor on its own, on espeak-ng's speech: what it holds down (echo
/// it is given the far end of) and what it leaves (everything else, 1 ms later).
@Suite struct ResidualEchoSuppressorTests {
    static let hop = 240
    static let crossfade = 48

    /// `signal` through a suppressor in hops, with `far` as its reference and the echo
    /// `echoDelay` samples behind it.
    static func suppressed(_ signal: [Float], far: [Float], echoDelay: Int) throws -> [Float] {
        let suppressor = try ResidualEchoSuppressor(hopSamples: hop, maximumEchoDelaySamples: 7_200,
                                                    crossfadeSamples: crossfade)
        var pcm = signal.map(int16(fromFloat:))
        let reference = far.map(int16(fromFloat:))
        for start in stride(from: 0, to: pcm.count - hop + 1, by: hop) {
            reference[start..<(start + hop)].withUnsafeBufferPointer { reference in
                pcm[start..<(start + hop)].withUnsafeMutableBufferPointer {
                    suppressor.process($0, reference: reference, echoDelaySamples: echoDelay)
                }
            }
        }
        return pcm.map(float(fromInt16:))
    }

    static func level(_ x: ArraySlice<Float>) -> Double { 10 * log10(max(SignalMeasures.energy(x) / Double(x.count), 1e-20)) }

    /// With no far end, what comes out is what went in, 1 ms later, to the sample.
    @Test func silenceFromTheFarEndChangesNothing() throws {
        let near = try SpeechFixture.speech(voice: .female).map { $0 * 0.5 }
        let out = try Self.suppressed(near, far: [Float](repeating: 0, count: near.count), echoDelay: 0)
        let worst = (Self.crossfade..<(near.count - Self.hop)).map { abs(out[$0] - near[$0 - Self.crossfade]) }.max() ?? 1
        #expect(worst <= 1.5 / 32768, "differs by \(worst * 32768) LSB")
    }

    /// A near talker while the far end talks too, with no echo of it (a headset, or a
    /// canceller that has learned the path): kept within 1 dB.
    @Test func aNearTalkerIsNotEcho() throws {
        let far = try SpeechFixture.speech(voice: .male).map { $0 * 0.5 }
        let near = Array(try SpeechFixture.speech(voice: .female).map { $0 * 0.3 }.prefix(far.count))
        let out = try Self.suppressed(near, far: Array(far.prefix(near.count)), echoDelay: 480)
        let kept = Self.level(out[48_000...]) - Self.level(near[48_000...])
        print("residual echo suppressor: a near talker kept at \(kept) dB")
        #expect(kept >= -1, "the near talker lost \(-kept) dB")
    }

    /// Echo that nothing has cancelled (a room's short response, 10 ms behind the reference
    /// as the alignment places it, or half a hop off that): after its first half second, at
    /// least 15 dB of it is gone.
    @Test(arguments: [480, 600])
    func echoItIsGivenTheFarEndOfIsHeldDown(echoDelay: Int) throws {
        let far = try SpeechFixture.speech(voice: .male).map { $0 * 0.5 }
        let echo = EchoCancellerTests.echo(of: far, delayMilliseconds: 0, gain: 0.5)
        let delayed = [Float](repeating: 0, count: echoDelay) + echo.dropLast(echoDelay)
        let out = try Self.suppressed(delayed, far: far, echoDelay: 480)
        let reduction = Self.level(delayed[24_000...]) - Self.level(out[24_000...])
        print("residual echo suppressor: echo \(echoDelay) samples behind, \(reduction) dB less")
        #expect(reduction >= 15, "echo \(echoDelay) samples behind: only \(reduction) dB less")
    }

    /// After the far end has been silent long enough for the suppressor only to pass the
    /// signal through, echo of what it says next is held down as before (15 dB less, half a
    /// second after it starts); and a near talker going on meanwhile comes out sample for
    /// sample, 1 ms later, across the moment it takes up its work again.
    @Test func echoAfterASilenceIsHeldDownAndTheReturnIsSeamless() throws {
        let speech = try SpeechFixture.speech(voice: .male).map { $0 * 0.5 }
        let silence = 96_000
        let far = [Float](repeating: 0, count: silence) + speech
        let echo = EchoCancellerTests.echo(of: far, delayMilliseconds: 0, gain: 0.5)
        let delayed = [Float](repeating: 0, count: 480) + echo.dropLast(480)
        let out = try Self.suppressed(delayed, far: far, echoDelay: 480)
        let from = silence + 24_000
        let reduction = Self.level(delayed[from...]) - Self.level(out[from...])
        print("residual echo suppressor: echo after 2 s of silence \(reduction) dB less")
        #expect(reduction >= 15, "echo after a silence: only \(reduction) dB less")

        let near = Array(try SpeechFixture.speech(voice: .female).map { $0 * 0.3 }.prefix(far.count))
        let both = zip(near, delayed).map { $0 + $1 }
        let heard = try Self.suppressed(both, far: Array(far.prefix(both.count)), echoDelay: 480)
        // From before the far end speaks until its first few hops are judged (`warmUp`).
        let around = (silence - 4_800)..<(silence + 1_920)
        let worst = around.map { abs(heard[$0] - both[$0 - Self.crossfade]) }.max() ?? 1
        #expect(worst <= 1.5 / 32768, "around the far end's return the output differs by \(worst * 32768) LSB")
    }
}
