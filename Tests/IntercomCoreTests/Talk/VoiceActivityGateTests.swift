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
