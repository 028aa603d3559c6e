import Foundation
import IntercomCore
import Testing
import TestSupport

/// The keyboard click suppressor on the voice detector's labelled signals (the acoustic lab's
/// keyboard, made here from seeds, and espeak-ng's speech): it is deterministic, so the figures
/// do not depend on the machine's load.
@Suite struct KeyClickSuppressorTests {
    static let rate = 48_000

    /// `signal` through the suppressor in 5 ms blocks, as the microphone cleaner runs it.
    static func suppressed(_ signal: [Float]) -> [Float] {
        var suppressor = KeyClickSuppressor()
        var pcm = signal.map(int16(fromFloat:))
        for start in stride(from: 0, to: pcm.count, by: 240) {
            pcm[start..<min(pcm.count, start + 240)].withUnsafeMutableBufferPointer { suppressor.process($0) }
        }
        return pcm.map(float(fromInt16:))
    }

    static func decibels(_ x: some Collection<Float>) -> Double {
        10 * log10(max(x.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count)), 1e-20))
    }

    static func difference(_ a: [Float], _ b: [Float]) -> [Float] { zip(a, b).map { $0 - $1 } }

    /// Typing in a quiet room (the room at -60 dBFS, the keyboard at -38): at least 8 dB of
    /// the keyboard is taken out. (The lab's talk key, a heavier press ringing for 6 ms at
    /// 1.1-1.5 kHz, is left: still loud in its third millisecond, it is taken for a fricative;
    /// push-to-talk has its own guard for it, `TalkKeyClickGuard`.)
    @Test func typingAloneIsBroughtDown() {
        let room = TalkKeyClickTests.room(seconds: 20)
        let keys = VoiceDetectorTests.keyboard(seconds: 20, seed: 17, talkKey: false)
        let signal = zip(room, keys).map { $0 + $1 }
        let out = Self.suppressed(signal)
        let before = Self.decibels(signal)
        let after = Self.decibels(out)
        print("key clicks: typing alone \(before) dB before, \(after) dB after")
        #expect(before - after >= 8, "typing \(before) dB before, \(after) dB after")
    }

    /// Speech alone, a sentence in each voice and the ten short words (each its own onset out
    /// of a quiet room): what the suppressor changes is at least 30 dB under the speech.
    @Test func speechAlonePassesAlmostUntouched() throws {
        var words: [Float] = []
        for word in VoiceDetectorTests.words {
            words += try SpeechFixture.speech(word, voice: .female) + [Float](repeating: 0, count: Self.rate / 5)
        }
        let sentences = [
            try SpeechFixture.speech(SpeechFixture.sentence, voice: .male),
            try SpeechFixture.speech(SpeechFixture.paragraph, voice: .female),
        ]
        for speech in sentences + [words] {
            let room = TalkKeyClickTests.room(seconds: Double(speech.count) / Double(Self.rate) + 0.1)
            let signal = zip(VoiceDetectorTests.scaled(speech, rmsDB: -30), room).map { $0 + $1 }
            let changed = Self.difference(Self.suppressed(signal), signal)
            print("key clicks: speech alone, \(Self.decibels(signal) - Self.decibels(changed)) dB over what changed")
            #expect(Self.decibels(signal) - Self.decibels(changed) >= 30, "changed \(Self.decibels(changed)) dB of \(Self.decibels(signal)) dB")
        }
    }

    /// Typing over a paragraph, the keyboard 5 dB under the speech: at least 3 dB less of the
    /// keyboard is left over the speech (what differs from the speech alone).
    @Test func typingOverSpeechIsBroughtDownAndTheSpeechKept() throws {
        let speech = VoiceDetectorTests.scaled(try SpeechFixture.speech(SpeechFixture.paragraph, voice: .male), rmsDB: -30)
        let keys = VoiceDetectorTests.scaled(VoiceDetectorTests.keyboard(seconds: Double(speech.count) / Double(Self.rate), seed: 23, talkKey: false), rmsDB: -35)
        let signal = zip(speech, keys).map { $0 + $1 }
        let out = Self.suppressed(signal)
        let before = Self.decibels(Self.difference(signal, speech))
        let after = Self.decibels(Self.difference(out, speech))
        print("key clicks: typing over speech \(before) dB before, \(after) dB after")
        #expect(before - after >= 3, "the keyboard over the speech: \(before) dB before, \(after) dB after")
    }
}
