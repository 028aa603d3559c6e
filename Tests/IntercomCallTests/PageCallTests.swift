import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Testing
import TestSupport

extension EndToEndTests {
    /// `intercom page` between real processes: the page plays over another device, which the
    /// receiver turns down by 15 dB while it sounds and brings back within 300 ms after.
    @Suite struct PageCallTests {
        typealias Device = SecureCallTests.Device

        static func tone(_ frequency: Double, seconds: Double, amplitude: Double = 0.2) -> [Float] {
            (0..<Int(seconds * 48_000)).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / 48_000)) }
        }

        static func wav(_ samples: [Float], _ name: String) throws -> String {
            let path = temporaryPath(name)
            try Data(WAVCodec.encode(.init(sampleRate: 48_000, channels: 1, samples: samples))).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// The amplitude of `frequency` in each 20 ms of `samples`.
        static func levels(of frequency: Double, in samples: [Float]) -> [Double] {
            stride(from: 0, to: samples.count - 960, by: 960).map { start in
                var (c, s) = (0.0, 0.0)
                for n in 0..<960 {
                    let phase = 2 * Double.pi * frequency * Double(start + n) / 48_000
                    c += Double(samples[start + n]) * cos(phase)
                    s += Double(samples[start + n]) * sin(phase)
                }
                return 2 * (c * c + s * s).squareRoot() / 960
            }
        }

        @Test func aPageDucksAnotherTalkerBy15dBAndReleasesWithin300ms() throws {
            let devices = try ["talker", "pager", "listener"].map(Device.init)
            for device in devices {
                for other in devices where other.directory != device.directory { try device.trust(other, as: "peer") }
            }
            let (talkerPort, listenerPort) = (freeUDPPort(), freeUDPPort())
            let output = temporaryPath("paged.wav")
            let listener = try ChildProcess.intercom(devices[2].arguments + [
                "--port", "\(listenerPort)", "--no-discovery", "--output-file", output, "--duration", "60",
            ])
            try #require(waitForUDPListener(port: listenerPort))
            let talker = try ChildProcess.intercom(devices[0].arguments + [
                "--port", "\(talkerPort)", "--no-discovery", "--peer", "127.0.0.1:\(listenerPort)",
                // Long enough for the page (which starts 3 s in, and may take seconds to start on
                // a loaded machine) and the second after it.
                "--input-file", try Self.wav(Self.tone(440, seconds: 16), "talker.wav"), "--duration", "17.5",
            ])
            usleep(3_000_000)
            let page = try ChildProcess.intercom(devices[1].arguments + [
                "page", "--no-discovery", "--peer", "127.0.0.1:\(listenerPort)", "--input-file", try Self.wav(Self.tone(1_000, seconds: 2), "chime.wav"),
            ])
            #expect(page.wait(seconds: 20) == 0, "\(page.standardError)")
            #expect(page.standardOutput.contains("paged 1 device"), "\(page.standardOutput)")
            CallFixtures.expectClean([("talker", talker)], within: 20)
            listener.signal(SIGTERM)
            CallFixtures.expectClean([("listener", listener)], within: 10)

            let heard = try CallFixtures.readWAV(output).samples
            let (talk, chime) = (Self.levels(of: 440, in: heard), Self.levels(of: 1_000, in: heard))
            let sounding = chime.indices.filter { chime[$0] > 0.05 }
            guard let first = sounding.first, let last = sounding.last else {
                Issue.record("the page was not heard: loudest \(chime.max() ?? 0)")
                return
            }
            #expect(Double(last - first) * 0.02 > 1.5, "the page played \(Double(last - first) * 0.02) s of 2")
            func mean(_ range: Range<Int>) -> Double { talk[range.clamped(to: 0..<talk.count)].reduce(0, +) / Double(max(1, range.count)) }
            let before = mean((first - 50)..<(first - 5))
            let during = mean((first + 10)..<(last - 5))
            // 300 ms after the page's last sound, and the second after.
            let after = mean((last + 15)..<(last + 65))
            let ducked = 20 * log10(before / max(during, 1e-9))
            print("page: the other device \(before) before, ducked by \(ducked) dB, \(after) from 300 ms after")
            #expect(before > 0.1, "the other device before the page: \(before)")
            #expect(abs(ducked - 15) <= 2, "ducked by \(ducked) dB")
            #expect(abs(20 * log10(before / max(after, 1e-9))) <= 1, "300 ms after the page: \(after) against \(before)")
        }
    }
}
