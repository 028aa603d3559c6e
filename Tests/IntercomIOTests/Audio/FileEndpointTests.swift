import Foundation
import IntercomCore
import IntercomIO
import Testing
import TestSupport

@Suite struct FileEndpointTests {
    @Test func outputsAreTheOwnersAloneAndNeverWrittenThroughALink() throws {
        let output = temporaryPath("private.wav")
        let sink = try WAVFileSink(path: output, frameLength: .milliseconds(10))
        sink.close()
        var status = stat()
        lstat(output, &status)
        #expect(status.st_mode & 0o777 == 0o600)

        // Someone else's file behind a link keeps its contents.
        let victim = temporaryPath("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let link = temporaryPath("link.wav")
        symlink(victim, link)
        #expect(throws: AudioEndpointError.self) { try WAVFileSink(path: link, frameLength: .milliseconds(10)) }
        let statsLink = temporaryPath("stats-link.json")
        symlink(victim, statsLink)
        #expect(throws: PrivateFileError.self) { try PrivateFile.writeOutput(statsLink, Array("{}".utf8)) }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")

        let stats = temporaryPath("stats.json")
        try PrivateFile.writeOutput(stats, Array("{}".utf8))
        lstat(stats, &status)
        #expect(status.st_mode & 0o777 == 0o600)
    }

    @Test func sourceConvertsRateAndChannelsAndPacesInRealTime() throws {
        // One second of a 440 Hz tone, stereo at 44.1 kHz.
        let frames = 44_100
        var samples: [Float] = []
        for i in 0..<frames {
            let value = Float(0.5 * sin(2 * Double.pi * 440 * Double(i) / 44_100))
            samples += [value, value]
        }
        let path = temporaryPath("stereo44.wav")
        try Data(WAVCodec.encode(.init(sampleRate: 44_100, channels: 2, samples: samples))).write(to: URL(fileURLWithPath: path))

        let source = try WAVFileSource(path: path, frameLength: .milliseconds(10))
        #expect(abs(source.sampleCount - 48_000) < 100)
        var frame = [Int16](repeating: 0, count: 480)
        let started = ContinuousClock.now
        var levels: [Double] = []
        for _ in 0..<20 {
            #expect(try source.read(into: &frame))
            levels.append(SignalMeasures.rms(frame.map(float(fromInt16:))))
        }
        let elapsed = ContinuousClock.now - started
        // Twenty 10 ms frames take 200 ms of real time, not less.
        #expect(elapsed >= .milliseconds(195))
        #expect(source.firstSampleTime != nil)
        #expect(abs(levels.last! - 0.5 / 2.0.squareRoot()) < 0.02)
    }

    @Test func sourceEndsWithSilenceAndSaysSo() throws {
        let path = temporaryPath("short.wav")
        let audio = WAVCodec.Audio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.25, count: 700))
        try Data(WAVCodec.encode(audio)).write(to: URL(fileURLWithPath: path))
        let source = try WAVFileSource(path: path, frameLength: .milliseconds(10))
        var frame = [Int16](repeating: 0, count: 480)
        #expect(try source.read(into: &frame))
        #expect(try source.read(into: &frame))
        #expect(frame[219] != 0 && frame[220] == 0)
        #expect(try source.read(into: &frame) == false)
        #expect(frame.allSatisfy { $0 == 0 })
    }

    @Test func unreadableOrInvalidFilesNameTheFile() throws {
        let missing = temporaryPath("missing.wav")
        #expect(throws: AudioEndpointError.self) { try WAVFileSource(path: missing, frameLength: .milliseconds(10)) }
        let junk = temporaryPath("junk.wav")
        try Data("not a wav".utf8).write(to: URL(fileURLWithPath: junk))
        do {
            _ = try WAVFileSource(path: junk, frameLength: .milliseconds(10))
            Issue.record("a junk file opened")
        } catch {
            #expect(error.description.contains(junk))
        }
    }

    @Test func sinkWritesAPlayableFileAsItGoes() throws {
        let path = temporaryPath("out.wav")
        let sink = try WAVFileSink(path: path, frameLength: .milliseconds(10))
        let frame = [Float](repeating: 0.5, count: 480)
        for _ in 0..<120 { try sink.write(frame) }
        // Before close: the header was brought up to date after each second.
        let partial = try WAVCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(partial.samples.count >= 48_000)
        sink.close()
        let whole = try WAVCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(whole.sampleRate == 48_000 && whole.channels == 1)
        #expect(whole.samples.count == 120 * 480)
        #expect(abs(whole.samples[1000] - 0.5) < 0.001)
        #expect(sink.firstSampleTime != nil)
    }
}
