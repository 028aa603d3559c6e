import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import IntercomSecurity
import Testing
import TestSupport

extension EndToEndTests {
    /// Rooms and targets between real processes: what a device says to a room or to one
    /// device reaches those devices only; the others' machines get none of it.
    @Suite struct TargetCallTests {
        typealias Device = NetworkEndToEndTests.SecureCallTests.Device

        struct Listener {
            let name: String
            let stats: CallStatistics
            let heard: [Float]
        }

        /// A talks `to` (with 3 s of silence first, for the sessions to come up and the listeners'
        /// hellos to say their rooms, on a loaded machine too), to B in the kitchen and C in no room; B and C are not each other's peers,
        /// so that whatever RTP each receives is A's. All three paired with each other.
        static func call(to target: String) throws -> (talker: CallStatistics, listeners: [Listener]) {
            let devices = try ["a", "b", "c"].map(Device.init)
            let names = ["ana", "bo", "cy"]
            for device in devices {
                for (other, name) in zip(devices, names) where other.directory != device.directory { try device.trust(other, as: name) }
            }
            let speech = try SpeechFixture.speech(SpeechFixture.sentence)
            let samples = [Float](repeating: 0, count: 144_000) + speech
            let speechFile = URL(fileURLWithPath: temporaryPath("target-in.wav"))
            try Data(WAVCodec.encode(.init(sampleRate: 48_000, channels: 1, samples: samples))).write(to: speechFile)
            let seconds = Double(samples.count) / 48_000 + 1.5
            let ports = (0..<3).map { _ in freeUDPPort() }
            let outputs = (0..<3).map { temporaryPath("target-\($0).wav") }
            let stats = (0..<3).map { temporaryPath("target-\($0).json") }
            let rooms: [[String]] = [[], ["--room", "kitchen"], []]
            let listeners = try [1, 2].map { (index: Int) -> (String, ChildProcess) in
                var arguments: [String] = devices[index].arguments + rooms[index]
                arguments += ["--port", "\(ports[index])", "--no-discovery", "--output-file", outputs[index], "--name", names[index]]
                arguments += ["--duration", "\(seconds + 60)", "--stats-json", stats[index], "--peer", "127.0.0.1:\(ports[0])"]
                return ("listener \(index)", try ChildProcess.intercom(arguments))
            }
            for index in [1, 2] { try #require(waitForUDPListener(port: ports[index]), "listener \(index) did not start") }
            let talker = try ChildProcess.intercom(devices[0].arguments + [
                "--port", "\(ports[0])", "--no-discovery", "--peer", "127.0.0.1:\(ports[1])", "--peer", "127.0.0.1:\(ports[2])",
                "--input-file", speechFile.path, "--duration", "\(seconds)", "--stats-json", stats[0], "--to", target, "--name", names[0],
            ])
            CallFixtures.expectClean([("talker", talker)], within: seconds + 20)
            usleep(500_000)
            for (_, listener) in listeners { listener.signal(SIGTERM) }
            CallFixtures.expectClean(listeners, within: 10)
            return (try CallFixtures.readStats(stats[0]), try [1, 2].map { index in
                Listener(name: names[index], stats: try CallFixtures.readStats(stats[index]), heard: try CallFixtures.readWAV(outputs[index]).samples)
            })
        }

        static func loudest(_ samples: [Float]) -> Double { SignalMeasures.blockRMS(samples, block: 4_800).max() ?? 0 }

        @Test func aRoomTalkReachesTheRoomOnlyAndAWhisperOneDeviceOnly() throws {
            let room = try Self.call(to: "room:kitchen")
            let (inRoom, outside) = (room.listeners[0], room.listeners[1])
            #expect(Self.loudest(inRoom.heard) > 0.02 && inRoom.stats.rtpReceived > 200, "bo in the kitchen: \(inRoom.stats.rtpReceived) packets")
            #expect(outside.stats.rtpReceived == 0 && Self.loudest(outside.heard) < 0.001, "cy outside it received \(outside.stats.rtpReceived) packets")
            #expect(room.talker.to == "room:kitchen" && room.talker.toPeers == 1, "\(room.talker.to) reaches \(room.talker.toPeers)")
            // The talker knows each listener's rooms from its hello.
            #expect(room.talker.peers.map(\.rooms).sorted { $0.count < $1.count } == [[], ["kitchen"]], "\(room.talker.peers.map(\.rooms))")

            let whisper = try Self.call(to: "cy")
            #expect(whisper.listeners[0].stats.rtpReceived == 0 && Self.loudest(whisper.listeners[0].heard) < 0.001,
                    "bo received \(whisper.listeners[0].stats.rtpReceived) packets of a whisper to cy")
            #expect(Self.loudest(whisper.listeners[1].heard) > 0.02 && whisper.listeners[1].stats.rtpReceived > 200)
        }
    }
}
