import Foundation
import IntercomCore
import Testing
import TestSupport

extension EndToEndTests {
    /// Interop with RTP tools nobody here wrote: ffmpeg listens to us, GStreamer talks to us.
    @Suite struct InteropTests {
        @Test func ffmpegDecodesOurStreamFromTheSDP() throws {
            let speechFile = try SpeechFixture.wavFile(SpeechFixture.sentence)
            let input = try SpeechFixture.speech(SpeechFixture.sentence)
            let listenPort = freeUDPPort()
            let sdpFile = temporaryPath("call.sdp")
            let sdp = try ChildProcess.intercom(["sdp", "--to", "127.0.0.1:\(listenPort)"])
            #expect(sdp.wait(seconds: 10) == 0)
            try sdp.standardOutput.write(toFile: sdpFile, atomically: true, encoding: .utf8)
            #expect(sdp.standardOutput.contains("a=rtpmap:96 opus/48000/2"))

            let output = temporaryPath("ffmpeg-out.wav")
            let ffmpeg = try ChildProcess("ffmpeg", [
                "-hide_banner", "-loglevel", "error", "-protocol_whitelist", "file,udp,rtp",
                "-i", sdpFile, "-ac", "1", "-ar", "48000", "-y", output,
            ])
            // ffmpeg must be listening before the first packet.
            try #require(waitForUDPListener(port: listenPort), "ffmpeg did not start: \(ffmpeg.standardError)")
            let seconds = Double(input.count) / 48_000 + 0.5
            let speaker = try ChildProcess.intercom([
                "--no-discovery", "--unencrypted", "--port", "\(freeUDPPort())", "--peer", "127.0.0.1:\(listenPort)",
                "--input-file", speechFile.path, "--duration", "\(seconds)",
            ])
            #expect(speaker.wait(seconds: seconds + 10) == 0, "\(speaker.standardError)")
            usleep(300_000)
            ffmpeg.signal(SIGINT)  // ffmpeg finishes its file on SIGINT
            #expect(ffmpeg.wait(seconds: 10) != nil, "\(ffmpeg.standardError)")

            let heard = try CallFixtures.readWAV(output)
            #expect(heard.samples.count > input.count / 2, "ffmpeg wrote \(heard.samples.count) samples: \(ffmpeg.standardError)")
            let match = CallFixtures.windowsOf(input: input, output: heard.mixedToMono())
            #expect(match.correlations.median > 0.8, "median correlation \(match.correlations.median)")
        }

        @Test func weReceiveGStreamersRTPOpusStream() throws {
            let speechFile = try SpeechFixture.wavFile(SpeechFixture.sentence)
            let input = try SpeechFixture.speech(SpeechFixture.sentence)
            let port = freeUDPPort()
            let output = temporaryPath("from-gst.wav")
            let stats = temporaryPath("gst.json")
            let seconds = Double(input.count) / 48_000 + 2.5
            // The listener runs until GStreamer is done (which may take seconds to start), then is
            // stopped (SIGTERM leaves cleanly).
            let listener = try ChildProcess.intercom([
                "--no-discovery", "--unencrypted", "--port", "\(port)", "--output-file", output, "--duration", "\(seconds + 60)", "--stats-json", stats,
            ])
            try #require(waitForUDPListener(port: port))
            let gstreamer = try ChildProcess("gst-launch-1.0", [
                "-q", "filesrc", "location=\(speechFile.path)", "!", "wavparse", "!", "audioconvert", "!", "audioresample", "!",
                "audio/x-raw,rate=48000,channels=1", "!", "opusenc", "bitrate=32000", "frame-size=10", "inband-fec=true", "!",
                "rtpopuspay", "pt=96", "!", "udpsink", "host=127.0.0.1", "port=\(port)",
            ])
            #expect(gstreamer.wait(seconds: seconds + 30) == 0, "\(gstreamer.standardError)")
            usleep(500_000)
            listener.signal(SIGTERM)
            #expect(listener.wait(seconds: 10) == 0, "\(listener.standardError)")

            let heard = try CallFixtures.readWAV(output)
            let received = try CallFixtures.readStats(stats).received
            #expect(received > 200)
            // The speech is looked for from the first sound heard: the output began when the
            // listener did, whenever GStreamer got going.
            let firstSound = SignalMeasures.blockRMS(heard.samples, block: 480).firstIndex { $0 > 0.01 } ?? 0
            let match = CallFixtures.windowsOf(input: input, output: heard.samples, searchingFrom: max(0, firstSound * 480 - 48_000), seconds: 2)
            #expect(match.correlations.median > 0.8, "median correlation \(match.correlations.median)")
        }
    }
}
