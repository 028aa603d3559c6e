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
    /// for the hang-over plus the pre-roll after the last speech, and the line hands out the
    /// frame captured two turns earlier, so the frame before the first voiced one is sent.
    @Test func thePrerollSendsTheFramesBeforeTheVoice() {
        var gate = VoiceActivityGate(hangoverNanoseconds: 20_000_000, prerollNanoseconds: 20_000_000)
        var line = PrerollLine(frames: 2, frameSamples: 1)
        var sent: [Int16] = []
        let speech = "0001100000"
        for (index, verdict) in speech.enumerated() {
            var frame: [Int16] = [Int16(index + 1)]
            let now = UInt64(index) * 10_000_000 + 1_000_000_000
            let open = gate.isOpen(speech: verdict == "1", now: now, delayNanoseconds: UInt64(line.count) * 10_000_000)
            line.pass(&frame, tag: index + 1, sending: open, pause: false)
            if open { sent.append(frame[0]) }
        }
        // Voiced frames are 4 and 5 (1-based): sent from 2 (two before) to 7 (two after).
        #expect(sent == [2, 3, 4, 5, 6, 7])
    }

    /// Pauses that come in while the gate sends are dropped until the delay is gone; every
    /// other frame goes out once, in order, and then straight through, as it comes in.
    @Test func pausesTakeTheDelayOutAndNothingElseIsLost() {
        var line = PrerollLine(frames: 3, frameSamples: 2)
        // Shut for 5 turns (the line fills), then sending from turn 5 on; the pauses at
        // turns 7, 9, 10 and 14.
        let pauses: Set<Int> = [7, 9, 10, 14]
        var sent: [Int] = []
        var delays: [Int] = []
        for turn in 0..<18 {
            var frame: [Int16] = [Int16(turn), Int16(-turn)]
            let sending = turn >= 5
            let tag = line.pass(&frame, tag: turn, sending: sending, pause: pauses.contains(turn))
            if sending {
                #expect(frame == [Int16(tag), Int16(-tag)], "the frame out is the one its tag names")
                sent.append(tag)
                delays.append(line.count)
            }
        }
        // Frames 2-4 held at the start, 7, 9 and 10 dropped (the delay 3 → 0), 14 passed
        // straight through: with no delay left, a pause is sent as it is.
        #expect(sent == [2, 3, 4, 5, 6, 8, 11, 12, 13, 14, 15, 16, 17])
        #expect(delays == [3, 3, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    /// While the gate is shut the line fills up again to its whole pre-roll.
    @Test func aShutGateRefillsThePreroll() {
        var line = PrerollLine(frames: 3, frameSamples: 1)
        var frame: [Int16] = [0]
        for turn in 0..<4 { line.pass(&frame, tag: turn, sending: false, pause: false) }
        #expect(line.count == 3)
        for turn in 4..<7 { line.pass(&frame, tag: turn, sending: true, pause: true) }
        #expect(line.count == 0)
        for turn in 7..<9 { line.pass(&frame, tag: turn, sending: false, pause: false) }
        #expect(line.count == 2)
        line.pass(&frame, tag: 9, sending: false, pause: true)
        line.pass(&frame, tag: 10, sending: false, pause: false)
        #expect(line.count == 3)
        var first: [Int16] = [11]
        let out = line.pass(&first, tag: 11, sending: true, pause: false)
        #expect(out == 8, "the oldest of the last three")
    }

    /// With its delay gone, the gate closes after the hang-over alone.
    @Test func theGateFollowsTheLinesDelay() {
        var gate = VoiceActivityGate(hangoverNanoseconds: 40_000_000, prerollNanoseconds: 30_000_000)
        _ = gate.isOpen(speech: true, now: 1_000_000_000)
        let wholePreroll = gate.isOpen(speech: false, now: 1_060_000_000)
        let sameDelay = gate.isOpen(speech: false, now: 1_060_000_000, delayNanoseconds: 30_000_000)
        let noDelay = gate.isOpen(speech: false, now: 1_060_000_000, delayNanoseconds: 0)
        let withinHangover = gate.isOpen(speech: false, now: 1_040_000_000, delayNanoseconds: 0)
        #expect(wholePreroll && sameDelay && !noDelay && withinHangover)
    }

    @Test func anEmptyLinePassesFramesThrough() {
        var empty = PrerollLine(frames: 0, frameSamples: 2)
        var frame: [Int16] = [5, 6]
        let out = empty.pass(&frame, tag: 4, sending: true, pause: false)
        #expect(out == 4)
        #expect(frame == [5, 6])
    }
}
