import Foundation
import IntercomCall
import IntercomCore
import IntercomIO
import Logging
import Testing
import TestSupport

extension EndToEndTests {
    /// A Raspberry Pi's talk button and lamps, on simulated GPIO lines behind the real interface.
    @Suite struct GPIOButtonTests {
        /// A call on any free port that speaks the paragraph from a file and plays nothing.
        static func fileCall(mode: TalkMode, peers: [SocketAddress] = [], logger: Logger) throws -> Call {
            let speech = try SpeechFixture.wavFile(SpeechFixture.paragraph)
            var configuration = CallConfiguration()
            configuration.port = 0
            configuration.mode = mode
            configuration.staticPeers = peers
            return try Call(
                configuration: configuration, source: try WAVFileSource(path: speech.path, frameLength: configuration.period),
                sink: NullSink(frameLength: configuration.period), logger: logger
            )
        }

        @Test func aBouncingButtonTalksAndTheLampsFollow() async throws {
            let logger = Logger(label: "test")
            let listener = try Self.fileCall(mode: .open, logger: logger)
            let pi = try Self.fileCall(mode: .ptt, peers: [.loopbackIPv4(port: listener.localPort)], logger: logger)
            // Plain RTP: a peer that only sends reports is not answered unless named.
            listener.addPeer(.loopbackIPv4(port: pi.localPort))
            let button = SimulatedGPIOLine()
            let (transmitLamp, receiveLamp) = (SimulatedGPIOLine(), SimulatedGPIOLine())
            let interface = TalkInterface(
                call: pi, options: .init(), terminal: nil, button: nil,
                gpio: .init(talkButtons: [(button, nil)], transmitLamp: transmitLamp, receiveLamp: receiveLamp)
            )
            try listener.start()
            try pi.start()
            try interface.start()
            defer {
                interface.stop()
                pi.stop()
                listener.stop()
            }
            // Waits are generous: on a loaded machine the calls take a while to get going.
            try await waitUntil(timeout: .seconds(20)) { receiveLamp.read() }
            #expect(!pi.isTransmitting)
            #expect(receiveLamp.read(), "the receive lamp is dark while the peer talks")
            // Pressed, with contact bounce: 3 ms apart, well inside the 20 ms the level must hold
            // (a blocking sleep, since an async one may wake late when the runner is busy).
            for level in [true, false, true, false, true] {
                button.set(level)
                usleep(3_000)
            }
            try await waitUntil(timeout: .seconds(10)) { pi.isTransmitting && transmitLamp.read() }
            #expect(pi.isTransmitting)
            #expect(transmitLamp.read())
            button.set(false)
            try await waitUntil(timeout: .seconds(10)) { !pi.isTransmitting && !transmitLamp.read() }
            #expect(!pi.isTransmitting)
            #expect(!transmitLamp.read())
            #expect(transmitLamp.writes == [false, true, false], "the lamp flickered: \(transmitLamp.writes)")
        }

        /// Two buttons: one talks to the call's target, the other to the kitchen while it is held;
        /// let go, the call's chosen target (a reload's, if one came meanwhile) is back.
        @Test func eachButtonTalksToItsOwnTarget() async throws {
            let logger = Logger(label: "test")
            let pi = try Self.fileCall(mode: .ptt, logger: logger)
            let (plain, kitchen) = (SimulatedGPIOLine(), SimulatedGPIOLine())
            let interface = TalkInterface(
                call: pi, options: .init(), terminal: nil, button: nil,
                gpio: .init(talkButtons: [(plain, nil), (kitchen, .room(GroupName("kitchen")!))])
            )
            try pi.start()
            try interface.start()
            defer {
                interface.stop()
                pi.stop()
            }
            kitchen.set(true)
            try await waitUntil(timeout: .seconds(10)) { pi.target == .room(GroupName("kitchen")!) }
            #expect(pi.target == .room(GroupName("kitchen")!))
            // A reload chooses another target meanwhile: the held button keeps its own, and once
            // it is let go the reload's is in force.
            pi.setTarget(.room(GroupName("upstairs")!))
            #expect(pi.target == .room(GroupName("kitchen")!))
            kitchen.set(false)
            try await waitUntil(timeout: .seconds(10)) { pi.target == .room(GroupName("upstairs")!) }
            #expect(pi.target == .room(GroupName("upstairs")!))
            pi.setTarget(.all)
            plain.set(true)
            try await waitUntil(timeout: .seconds(10)) { pi.statistics().runningSeconds > 0 && pi.isTransmitting }
            #expect(pi.target == .all, "a button without a target of its own talks to the call's")
            plain.set(false)
        }

        @Test func lineAddresses() {
            #expect(GPIOLineAddress("gpiochip0:17") == GPIOLineAddress("gpiochip0:17"))
            #expect(GPIOLineAddress("gpiochip0:17")?.offset == 17)
            #expect(GPIOLineAddress("0:4")?.chip == "0")
            #expect(GPIOLineAddress("17") == nil)
            #expect(GPIOLineAddress("chip:x") == nil)
        }

        @Test(arguments: ["gpiochip99:1", "99:1", "/dev/gpiochip99:1", "no-such-label:1"])
        func aMissingChipIsAClearError(address: String) {
            let error = #expect(throws: GPIOError.self) {
                try ChipGPIOLine(GPIOLineAddress(address)!, direction: .input(activeLow: true))
            }
            #expect(error?.operation == "open the chip")
            #expect(error?.description.hasPrefix("GPIO \(address): cannot open the chip: ") == true)
        }
    }
}

/// A line that tests drive by hand, behind the same interface as a real one.
private final class SimulatedGPIOLine: GPIOLine, @unchecked Sendable {
    private var level: Bool
    private(set) var writes: [Bool] = []

    init(level: Bool = false) { self.level = level }

    func set(_ level: Bool) { self.level = level }
    func read() -> Bool { level }
    func write(_ on: Bool) {
        level = on
        writes.append(on)
    }
}
