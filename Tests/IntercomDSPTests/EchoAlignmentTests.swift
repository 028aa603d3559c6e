import IntercomCore
import Testing
import TestSupport

/// The echo canceller's reference placed by the devices' timestamps and kept where the
/// signals found the echo: real speech, played and captured frame by frame on a virtual clock.
@Suite struct EchoAlignmentTests {
    static let frame = 240
    static let frameNanoseconds: UInt64 = 5_000_000
    static let base: UInt64 = 1_000_000_000

    /// A call of `seconds`: the speaker plays `far` from `base` on, frame by frame, reporting
    /// true play times; the microphone hears it `echoDelay(n)` samples later at half level
    /// (plus a little noise) and reports capture times moved by `captureOffset(seconds)`; the
    /// play time of frame i is reported `playOffset(i)` late.
    /// Returns the alignment and the reference and microphone frames the canceller got.
    static func call(
        seconds: Int, echoDelay: (Int) -> Int, captureOffset: (Double) -> Int64 = { _ in 0 },
        playOffset: (Int) -> UInt64 = { _ in 0 }
    ) throws -> (alignment: EchoAlignment, references: [[Int16]], microphones: [[Int16]]) {
        let far = try SpeechFixture.speech(SpeechFixture.paragraph).map { $0 * 0.6 }
        var noise = SeededNoise(seed: 11)
        var alignment = EchoAlignment(frameSamples: frame, tailMilliseconds: 150)
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

    /// Once the echo is found, capture times reported 20 ms late for six seconds (a loaded
    /// machine) move nothing: no re-sync, no correction, the echo stays where it was found.
    @Test func timestampsOffForSecondsDoNotMoveTheReferenceOnceTheEchoIsFound() throws {
        let call = try Self.call(seconds: 14, echoDelay: { _ in 1_920 }, captureOffset: { (4...10).contains($0) ? 20_000_000 : 0 })
        #expect(call.alignment.resyncs == 0)
        #expect(call.alignment.corrections == 0)
        let found = try #require(call.alignment.echoDelaySamples)
        #expect(abs(found - 1_440) <= 48, "echo \(found) samples behind the reference")
        let end = try #require(Self.delayAtTheEnd(call.references, call.microphones))
        #expect(abs(end - found) <= 48)
    }

    /// Capture times 150 ms late for half a second (a stalled machine), after the echo was
    /// found: that is more than the signals can see, so the timestamps move the reference,
    /// and move it back when they come back; the echo ends where the canceller learned it.
    @Test func aStallThatMovesTheTimestampsFarIsUndoneByTheSignals() throws {
        let call = try Self.call(seconds: 14, echoDelay: { _ in 1_920 }, captureOffset: { (6..<6.5).contains($0) ? 150_000_000 : 0 })
        let found = try #require(call.alignment.echoDelaySamples)
        let end = try #require(Self.delayAtTheEnd(call.references, call.microphones))
        #expect(abs(end - found) <= 48, "echo \(end) samples behind the reference, \(found) kept")
        #expect(call.alignment.resyncs <= 2)
    }

    /// Once the echo is found, played frames reported 12 ms late now and then (a loaded
    /// machine; the speaker did not pause) put no silence into the reference.
    @Test func playTimesReportedLateDoNotPutSilenceInOnceTheEchoIsFound() throws {
        let call = try Self.call(seconds: 14, echoDelay: { _ in 1_920 }, playOffset: { $0 > 800 && $0 % 300 < 3 ? 12_000_000 : 0 })
        #expect(call.alignment.resyncs == 0)
        #expect(call.alignment.corrections == 0)
        let found = try #require(call.alignment.echoDelaySamples)
        let end = try #require(Self.delayAtTheEnd(call.references, call.microphones))
        #expect(abs(end - found) <= 48, "echo \(end) samples behind the reference, \(found) kept")
    }

    /// The echo comes 15 ms earlier from 7 s on (the speaker's stream lost samples), with
    /// timestamps that do not say so: the reference follows once, and the echo is again where
    /// the canceller learned it.
    @Test func anEchoThatMovesIsFollowedSoThatItStaysWhereItWasLearned() throws {
        let call = try Self.call(seconds: 16, echoDelay: { $0 < 7 * 48_000 ? 1_920 : 1_200 })
        #expect(call.alignment.resyncs == 0)
        #expect(call.alignment.corrections == 1)
        let kept = try #require(call.alignment.echoDelaySamples)
        let end = try #require(Self.delayAtTheEnd(call.references, call.microphones))
        #expect(abs(end - kept) <= 48, "echo \(end) samples behind the reference, \(kept) kept")
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
}
