import IntercomCore
import IntercomDSP
import Testing
import TestSupport

/// The echo canceller's reference placed by the devices' timestamps and kept where the
/// signals found the echo: real speech, played and captured frame by frame on a virtual clock.
@Suite struct EchoAlignmentTests {
    static let frame = 240
    static let frameNanoseconds: UInt64 = 5_000_000
    static let base: UInt64 = 1_000_000_000

    /// The alignment after a call, and the reference and microphone frames the canceller got.
    typealias Call = (alignment: EchoAlignment, references: [[Int16]], microphones: [[Int16]])

    /// A call of `seconds`: the speaker plays `far` from `base` on, frame by frame, reporting
    /// true play times; the microphone hears it `echoDelay(n)` samples later at half level
    /// (plus a little noise) and reports capture times moved by `captureOffset(seconds)`; the
    /// play time of frame i is reported `playOffset(i)` late.
    /// Returns the alignment and the reference and microphone frames the canceller got.
    static func call(
        seconds: Int, echoDelay: (Int) -> Int, captureOffset: (Double) -> Int64 = { _ in 0 },
        playOffset: (Int) -> UInt64 = { _ in 0 }
    ) throws -> Call {
        let far = try SpeechFixture.speech(SpeechFixture.paragraph).map { $0 * 0.6 }
        var noise = SeededNoise(seed: 11)
        var alignment = EchoAlignment(frameLength: FrameLength(samples: frame), tailMilliseconds: 150)
        var references: [[Int16]] = []
        var microphones: [[Int16]] = []
        var reference: [Int16] = []
        for index in 0..<(seconds * 200) {
            let played = (0..<frame).map { int16(fromFloat: far[(index * frame + $0) % far.count]) }
            alignment.played(played, at: base + UInt64(index) * frameNanoseconds + playOffset(index))
            // The microphone frame captured one period ago.
            guard index > 0 else { continue }
            let start = (index - 1) * frame
            let microphone = (start..<(start + frame)).map { n -> Int16 in
                let source = n - echoDelay(n)
                let echo = source >= 0 ? far[source % far.count] * 0.5 : 0
                return int16(fromFloat: echo + noise.sample() * 0.002)
            }
            let captured = Int64(base) + Int64(index - 1) * Int64(frameNanoseconds) + captureOffset(Double(start) / 48_000)
            alignment.reference(for: microphone, capturedAt: UInt64(captured), into: &reference)
            references.append(reference)
            microphones.append(microphone)
        }
        return (alignment, references, microphones)
    }

    /// Where the echo is behind the reference in the last `seconds` of a call, found afresh.
    static func delayAtTheEnd(_ references: [[Int16]], _ microphones: [[Int16]], seconds: Int = 4) -> Int? {
        var estimator = EchoDelayEstimator(frameSamples: frame)
        var last: Int?
        for index in (references.count - seconds * 200)..<references.count {
            last = estimator.observe(reference: references[index], microphone: microphones[index]) ?? last
        }
        return last
    }

    /// Expects the echo in the last seconds of `call` within 1 ms of where the alignment keeps
    /// it (where the canceller learned it); returns where that is.
    @discardableResult
    static func expectEchoWhereKept(_ call: Call) throws -> Int {
        let kept = try #require(call.alignment.echoDelaySamples)
        let end = try #require(delayAtTheEnd(call.references, call.microphones))
        #expect(abs(end - kept) <= 48, "echo \(end) samples behind the reference, \(kept) kept")
        return kept
    }

    /// Once the echo is found, capture times reported 20 ms late for six seconds (a loaded
    /// machine) move nothing: no re-sync, no correction, the echo stays where it was found.
    @Test func timestampsOffForSecondsDoNotMoveTheReferenceOnceTheEchoIsFound() throws {
        let call = try Self.call(seconds: 14, echoDelay: { _ in 1_920 }, captureOffset: { (4...10).contains($0) ? 20_000_000 : 0 })
        #expect(call.alignment.resyncs == 0)
        #expect(call.alignment.corrections == 0)
        let found = try Self.expectEchoWhereKept(call)
        #expect(abs(found - 1_440) <= 48, "echo \(found) samples behind the reference")
    }

    /// Capture times 150 ms late for half a second (a stalled machine), after the echo was
    /// found: that is more than the signals can see, so the timestamps move the reference,
    /// and move it back when they come back; the echo ends where the canceller learned it.
    @Test func aStallThatMovesTheTimestampsFarIsUndoneByTheSignals() throws {
        let call = try Self.call(seconds: 14, echoDelay: { _ in 1_920 }, captureOffset: { (6..<6.5).contains($0) ? 150_000_000 : 0 })
        try Self.expectEchoWhereKept(call)
        #expect(call.alignment.resyncs <= 2)
    }

    /// Once the echo is found, played frames reported 12 ms late now and then (a loaded
    /// machine; the speaker did not pause) put no silence into the reference.
    @Test func playTimesReportedLateDoNotPutSilenceInOnceTheEchoIsFound() throws {
        let call = try Self.call(seconds: 14, echoDelay: { _ in 1_920 }, playOffset: { $0 > 800 && $0 % 300 < 3 ? 12_000_000 : 0 })
        #expect(call.alignment.resyncs == 0)
        #expect(call.alignment.corrections == 0)
        try Self.expectEchoWhereKept(call)
    }

    /// The echo comes 15 ms earlier from 7 s on (the speaker's stream lost samples), with
    /// timestamps that do not say so: the reference follows once, and the echo is again where
    /// the canceller learned it.
    @Test func anEchoThatMovesIsFollowedSoThatItStaysWhereItWasLearned() throws {
        let call = try Self.call(seconds: 16, echoDelay: { $0 < 7 * 48_000 ? 1_920 : 1_200 })
        #expect(call.alignment.resyncs == 0)
        #expect(call.alignment.corrections == 1)
        try Self.expectEchoWhereKept(call)
    }

    /// An echo that comes before the reference (devices whose reported delays are short by
    /// more than the safety margin) cannot be cancelled: the reference is moved so that the
    /// echo comes 10 ms behind it.
    @Test func anEchoAheadOfTheReferenceIsMovedBehindIt() throws {
        let call = try Self.call(seconds: 10, echoDelay: { _ in 240 })
        #expect(call.alignment.corrections == 1)
        #expect(call.alignment.echoDelaySamples == call.alignment.targetSamples)
        let end = try #require(Self.delayAtTheEnd(call.references, call.microphones))
        #expect(abs(end - call.alignment.targetSamples) <= 48, "echo \(end) samples behind the reference")
    }

    /// An echo that comes 150 ms later than the timestamps say (devices whose reported delays
    /// are short by that much) is moved early in the canceller's tail, and stays there: the
    /// timestamps, which go on saying what they said, are no reason to move it back, however
    /// much further from them the move put the reference than a re-sync allows.
    @Test func anEchoPlacedFarFromWhereTheTimestampsPutItStaysPlaced() throws {
        let call = try Self.call(seconds: 14, echoDelay: { _ in 7_200 })
        #expect(call.alignment.corrections == 1)
        #expect(call.alignment.resyncs == 0)
        #expect(call.alignment.echoDelaySamples == call.alignment.targetSamples)
        let end = try #require(Self.delayAtTheEnd(call.references, call.microphones))
        #expect(abs(end - call.alignment.targetSamples) <= 48, "echo \(end) samples behind the reference")
    }

    /// The same devices after a restart that made the echo come 150 ms later, as the
    /// timestamps say: the reference re-syncs once, and the echo is where it was placed again.
    @Test func aPlacedEchoIsKeptPlacedWhenTheTimestampsReSync() throws {
        let call = try Self.call(seconds: 16, echoDelay: { $0 < 8 * 48_000 ? 7_200 : 14_400 }, captureOffset: { $0 >= 8 ? -150_000_000 : 0 })
        #expect(call.alignment.resyncs == 1)
        #expect(call.alignment.corrections == 1)
        try Self.expectEchoWhereKept(call)
    }

    /// A call through SpeexDSP's canceller: the far end's paragraph reaches the microphone
    /// through a short reverberant path 40 ms after it is played, `shift` samples later from
    /// 7 s on (the speaker's or the microphone's stream skipped, and the timestamps do not say
    /// so), with `near` (a sentence) talking over it from 7 s when given, and capture times
    /// reported `captureOffset(seconds)` late. Returns the echo reduction in each quarter
    /// second, when each correction came, the moves recorded and the alignment.
    static func cancelledCall(
        shift: Int, near: [Float]? = nil, captureOffset: (Double) -> Int64 = { _ in 0 }
    ) throws -> (reduction: [Double], corrections: [Double], moves: [EchoMove], alignment: EchoAlignment) {
        let far = try SpeechFixture.speech(SpeechFixture.paragraph).map { $0 * 0.6 }
        let canceller = try EchoCanceller(frameLength: FrameLength(samples: frame), tailMilliseconds: 150)
        var alignment = EchoAlignment(frameLength: FrameLength(samples: frame), tailMilliseconds: 150)
        var noise = SeededNoise(seed: 11)
        let path: [(delay: Int, gain: Float)] = [(0, 0.5), (37, 0.2), (91, -0.15), (180, 0.1), (400, 0.05)]
        let moveAt = 7 * 48_000
        var reference: [Int16] = []
        var echoEnergy = [Double](repeating: 0, count: 16 * 4)
        var leftEnergy = [Double](repeating: 0, count: 16 * 4)
        var corrections: [Double] = []
        var moves: [EchoMove] = []
        for index in 0..<(16 * 200) {
            let played = (0..<frame).map { int16(fromFloat: far[(index * frame + $0) % far.count]) }
            alignment.played(played, at: base + UInt64(index) * frameNanoseconds)
            guard index > 0 else { continue }
            let start = (index - 1) * frame
            var microphone = (start..<(start + frame)).map { n -> Int16 in
                let delay = 1_920 + (n >= moveAt ? shift : 0)
                var echo: Float = 0
                for tap in path where n - delay - tap.delay >= 0 { echo += far[(n - delay - tap.delay) % far.count] * tap.gain }
                let talk = near.map { n >= moveAt && n - moveAt < $0.count ? $0[n - moveAt] * 0.5 : 0 } ?? 0
                return int16(fromFloat: echo + talk + noise.sample() * 0.0005)
            }
            let echoOnly = microphone
            let correctionsBefore = alignment.corrections
            let captured = Int64(base) + Int64(index - 1) * Int64(frameNanoseconds) + captureOffset(Double(start) / 48_000)
            alignment.reference(for: microphone, capturedAt: UInt64(captured), into: &reference)
            try canceller.cancel(&microphone, reference: reference)
            alignment.echoPredicted(zip(echoOnly, microphone).map { Int16(clamping: Int($0) - Int($1)) })
            if alignment.corrections != correctionsBefore, let move = alignment.lastMove {
                corrections.append(Double(start) / 48_000)
                moves.append(move)
            }
            let quarter = start / 12_000
            echoEnergy[quarter] += echoOnly.reduce(0) { $0 + Double($1) * Double($1) }
            leftEnergy[quarter] += microphone.reduce(0) { $0 + Double($1) * Double($1) }
        }
        return (zip(echoEnergy, leftEnergy).map { SignalMeasures.decibels($0, over: max($1, 1)) }, corrections, moves, alignment)
    }

    /// The canceller unlearns a moved echo within a few hundred milliseconds and then needs
    /// seconds to learn it again (0-10 dB for the next second when nothing followed the move,
    /// or when the decimated estimator's whole taps did, 0.4-2 s late). Moves of a fraction
    /// of a millisecond up to 7 ms, either way, are put back within a fifth of a second and
    /// to the sample, and the canceller goes on cancelling.
    @Test(arguments: [10, -100, 317, -317])
    func anEchoThatMovesIsPutBackAtOnceAndTheCancellerKeepsCancelling(by shift: Int) throws {
        let call = try Self.cancelledCall(shift: shift)
        #expect((1...2).contains(call.corrections.count), "corrections at \(call.corrections) s")
        #expect(call.corrections.allSatisfy { $0 >= 7 && $0 < 7.3 }, "corrections at \(call.corrections) s")
        // Each move is recorded with the frame that found it, and together they make the shift.
        #expect(zip(call.moves, call.corrections).allSatisfy { move, at in
            Double(move.capturedAt - Self.base) / Double(Self.frameNanoseconds) * Double(Self.frame) / 48_000 == at
        }, "\(call.moves)")
        #expect(abs(call.moves.reduce(0) { $0 + $1.samples } - shift) <= 2, "\(call.moves)")
        // From a quarter second after the move to one and a quarter.
        let after = call.reduction[29..<33]
        let mean = after.reduce(0, +) / Double(after.count)
        #expect(mean >= 15, "echo reduced by \(after.map { Int($0) }) dB after the move")
    }

    /// Capture times reported 150 ms late for two seconds (a stalled machine) while the
    /// canceller cancels: off by more than a re-sync allows, but the echo stays where the
    /// canceller learned it, so nothing moves and the canceller goes on cancelling.
    @Test func timestampsFarOffWhileTheCancellerHoldsMoveNothing() throws {
        let call = try Self.cancelledCall(shift: 0, captureOffset: { (8..<10).contains($0) ? 150_000_000 : 0 })
        #expect(call.alignment.resyncs == 0)
        #expect(call.alignment.refusedResyncs >= 1)
        #expect(call.corrections.isEmpty, "corrections at \(call.corrections) s")
        let during = call.reduction[32..<44]
        #expect(during.allSatisfy { $0 >= 15 }, "echo reduced by \(during.map { Int($0) }) dB from 8 to 11 s")
    }

    /// The near end talking over a converged canceller leaves much of the microphone
    /// uncancelled, as a moved echo would; nothing moves.
    @Test func doubleTalkOverAConvergedCancellerMovesNothing() throws {
        let near = try SpeechFixture.speech(SpeechFixture.sentence, voice: .female)
        let call = try Self.cancelledCall(shift: 0, near: near)
        #expect(call.corrections.isEmpty, "corrections at \(call.corrections) s")
    }
}
