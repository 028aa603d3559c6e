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

    /// A recording is read a block at a time (so that a long one costs no more memory than its
    /// samples) into the same samples as a whole-file decode: chunks before the format and an
    /// odd-sized one, another rate and channel count, several blocks, and a data chunk whose
    /// size field overruns the file, as a killed writer leaves it.
    @Test func aRecordingReadABlockAtATimeIsTheSameAsOneDecodedWhole() throws {
        let rate = 44_100
        var noise = SeededGenerator(seed: 3)
        var samples: [Float] = []
        for i in 0..<(3 * rate) {
            let tone = Float(0.4 * sin(2 * Double.pi * 330 * Double(i) / Double(rate)))
            samples += [tone, Float.random(in: -0.3...0.3, using: &noise)]
        }
        let audio = WAVCodec.encode(.init(sampleRate: rate, channels: 2, samples: samples))
        func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
            let size = UInt32(body.count)
            return Array(id.utf8) + [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)]
                + body + (body.count % 2 == 1 ? [0] : [])
        }
        // The encoder's 44-byte header is RIFF (12), 'fmt ' (24), then the data chunk's header (8).
        let format = Array(audio[12..<36])
        var data = Array(audio[36...])
        data.removeLast(1_000)  // the size field still counts the bytes cut off
        var file = Array(audio[0..<12]) + chunk("LIST", Array("INFOsome text".utf8)) + format + data
        let riffSize = UInt32(file.count - 8)
        file.replaceSubrange(4..<8, with: [UInt8(riffSize & 0xFF), UInt8(riffSize >> 8 & 0xFF), UInt8(riffSize >> 16 & 0xFF), UInt8(riffSize >> 24)])
        let path = temporaryPath("blocks.wav")
        try Data(file).write(to: URL(fileURLWithPath: path))

        let streamed = try WAVRecording.read(path: path)
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        let whole = try WAVRecording.read(descriptor: descriptor, size: file.count, maximumSeconds: 10)
        #expect(abs(streamed.count - (3 * rate - 250) * 48_000 / rate) < 100, "\(streamed.count) samples")
        #expect(streamed.count == whole.count)
        let largest = zip(streamed, whole).map { abs(Int($0) - Int($1)) }.max() ?? .max
        #expect(largest <= 1, "samples differ by up to \(largest)")
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
