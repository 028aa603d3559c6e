import Foundation
import IntercomCore

/// Synthetic speech for tests, spoken by espeak-ng and converted to 48 kHz mono by sox.
/// Each utterance is made once per test process and cached in a temporary folder.
public enum SpeechFixture {
    public enum Voice: String, Sendable, CaseIterable {
        case male = "en-us+m3"
        case female = "en-us+f3"
        case british = "en-gb+m1"
    }

    public static let sampleRate = 48_000

    /// A paragraph long enough for adaptive filters to converge.
    public static let paragraph = """
        The quick brown fox jumps over the lazy dog near the river bank. \
        Please call Stella and ask her to bring these things with her from the store: \
        six spoons of fresh snow peas, five thick slabs of blue cheese, and maybe a snack for her brother Bob. \
        We also need a small plastic snake and a big toy frog for the kids.
        """

    public static let sentence = "Hello, this is a test of the intercom. Can you hear me clearly?"

    private static let cache = NSLock()
    nonisolated(unsafe) private static var made: [String: [Float]] = [:]

    /// Speech samples at 48 kHz mono in [-1, 1].
    public static func speech(_ text: String = paragraph, voice: Voice = .male) throws -> [Float] {
        let key = "\(voice.rawValue)|\(text)"
        cache.lock()
        defer { cache.unlock() }
        if let samples = made[key] { return samples }
        let url = try wavFile(text, voice: voice)
        let audio = try WAVCodec.decode(Array(try Data(contentsOf: url)))
        made[key] = audio.mixedToMono()
        return made[key]!
    }

    private static let files = NSLock()

    /// A 48 kHz mono 16-bit WAV file of the utterance, made once per process. Concurrent
    /// tests wait for each other, and the file appears under its name only once complete.
    public static func wavFile(_ text: String = paragraph, voice: Voice = .male) throws -> URL {
        files.lock()
        defer { files.unlock() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("intercom-speech-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let name = "\(voice.rawValue)-\(UInt32(truncatingIfNeeded: text.hashValue))"
        let output = folder.appendingPathComponent("\(name)-48k.wav")
        if FileManager.default.fileExists(atPath: output.path) { return output }
        let raw = folder.appendingPathComponent("\(name)-raw.wav")
        let partial = folder.appendingPathComponent("\(name)-48k.partial.wav")
        try run("espeak-ng", ["-v", voice.rawValue, "-s", "160", "-w", raw.path, text])
        try run("sox", [raw.path, "-r", "48000", "-c", "1", "-b", "16", partial.path])
        guard rename(partial.path, output.path) == 0 else { throw FixtureError.toolFailed("rename", String(cString: strerror(errno))) }
        return output
    }

    /// Runs a tool to completion and fails with its standard error if it fails.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError.toolFailed(tool, String(decoding: errData, as: UTF8.self))
        }
        return String(decoding: outData, as: UTF8.self)
    }
}

public enum FixtureError: Error, CustomStringConvertible {
    case toolFailed(String, String)

    public var description: String {
        switch self {
        case .toolFailed(let tool, let message): "\(tool) failed: \(message)"
        }
    }
}
