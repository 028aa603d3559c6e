import IntercomCore
import Testing

@Suite struct VoiceActivityGateTests {
    /// Each row: VAD verdicts for consecutive 10 ms frames, and the gate's expected output
    /// with a 40 ms hang-over: open until four frames after the last speech.
    static let rows: [(name: String, speech: String, open: String)] = [
        ("silence stays closed", "0000000000", "0000000000"),
        ("speech opens at once", "0011000000", "0011111100"),
        ("a short pause is bridged", "110011000000", "111111111100"),
        ("hang-over then closes", "1000000000", "1111100000"),
    ]

    @Test(arguments: rows)
    func gateFollowsSpeechWithHangover(row: (name: String, speech: String, open: String)) {
        var gate = VoiceActivityGate(hangoverNanoseconds: 40_000_000)
        var output = ""
        for (index, verdict) in row.speech.enumerated() {
            let now = UInt64(index) * 10_000_000 + 5_000_000_000
            output += gate.isOpen(speech: verdict == "1", now: now) ? "1" : "0"
        }
        #expect(output == row.open, "\(row.name)")
    }
}

@Suite struct VoxPrerollTests {
    /// With a 20 ms pre-roll the gate decides for the frame two turns behind: it stays open
    /// for the hang-over plus the pre-roll after the last speech, and the delay line hands out
    /// the frame captured two turns earlier, so the frame before the first voiced one is sent.
    @Test func thePrerollSendsTheFramesBeforeTheVoice() {
        var gate = VoiceActivityGate(hangoverNanoseconds: 20_000_000, prerollNanoseconds: 20_000_000)
        var line = FrameDelayLine(frames: 2, frameSamples: 1)
        var sent: [Int16] = []
        let speech = "0001100000"
        for (index, verdict) in speech.enumerated() {
            var frame: [Int16] = [Int16(index + 1)]
            line.pass(&frame, delayed: true)
            if gate.isOpen(speech: verdict == "1", now: UInt64(index) * 10_000_000 + 1_000_000_000) { sent.append(frame[0]) }
        }
        // Voiced frames are 4 and 5 (1-based): sent from 2 (two before) to 7 (two after).
        #expect(sent == [2, 3, 4, 5, 6, 7])
    }

    /// Not delayed, the line passes frames through while it keeps the last ones.
    @Test func theDelayLineCanPassFramesThrough() {
        var line = FrameDelayLine(frames: 3, frameSamples: 2)
        var outputs: [[Int16]] = []
        for index in 0..<6 {
            var frame: [Int16] = [Int16(index), Int16(-index)]
            line.pass(&frame, delayed: index >= 3)
            outputs.append(frame)
        }
        #expect(outputs == [[0, 0], [1, -1], [2, -2], [0, 0], [1, -1], [2, -2]])
        var empty = FrameDelayLine(frames: 0, frameSamples: 2)
        var frame: [Int16] = [5, 6]
        empty.pass(&frame, delayed: true)
        #expect(frame == [5, 6])
    }
}
