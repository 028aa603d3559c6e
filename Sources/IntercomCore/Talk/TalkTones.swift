import Glibc

/// The short tones a two-way radio makes when a transmission starts (rising) and ends
/// (falling), so both ends hear when to talk and when the other has finished.
public enum TalkTones {
    /// Two 40 ms notes with soft edges, at a level well below speech peaks.
    public static func start(sampleRate: Int = VoiceFormat.sampleRate) -> [Float] { notes([880, 1320], sampleRate: sampleRate) }
    public static func end(sampleRate: Int = VoiceFormat.sampleRate) -> [Float] { notes([1320, 880], sampleRate: sampleRate) }

    private static let amplitude: Float = 0.2
    private static let noteMilliseconds = 40

    private static func notes(_ frequencies: [Double], sampleRate: Int) -> [Float] {
        let length = MediaTime.samples(milliseconds: noteMilliseconds, rate: sampleRate)
        let ramp = MediaTime.samples(milliseconds: 4, rate: sampleRate)
        return frequencies.flatMap { frequency in
            (0..<length).map { i in
                let edge = Float(min(1, Double(min(i, length - 1 - i)) / Double(ramp)))
                let phase = 2 * Double.pi * frequency * Double(i) / Double(sampleRate)
                return amplitude * edge * Float(sin(phase))
            }
        }
    }
}
