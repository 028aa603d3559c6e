import Foundation

/// A private, headless PulseAudio server whose null sinks are sound devices paced in real
/// time (`scripts/lab/audio-lab`), for tests of the ALSA endpoints and of whole peers.
///
/// Each lab has its own server, socket and device names, so tests can run side by side. Its
/// ALSA devices are visible to this process (through `ALSA_CONFIG_PATH`, set once) and to
/// child processes started with `environment`. The lab stops when released, and by itself
/// if this process dies first.
public final class AudioLab: @unchecked Sendable {
    /// The device names this lab was started with, as in `scripts/lab/audio/devices`.
    public let devices: [String]
    /// The lab's folder: its server's socket, logs and ALSA configuration.
    public let directory: String
    private let prefix: String
    /// What clients need to reach the lab: PULSE_SERVER, PULSE_COOKIE, ALSA_CONFIG_PATH.
    public let environment: [String: String]
    private let stopLock = NSLock()
    private var stopped = false

    /// Whether labs can run here: PulseAudio is installed.
    public static var isAvailable: Bool {
        (try? SpeechFixture.run("sh", ["-c", "command -v pulseaudio"])) != nil
    }

    public static let unavailableReason = "the audio lab needs pulseaudio (scripts/setup installs it)"

    /// Starts a lab with the named devices without holding one of the test runner's few
    /// threads while it waits for PulseAudio.
    /// With `bus`, those devices are channels of one sink, recorded together by `recordBus`.
    public static func start(devices: [String], bus: [String] = []) async throws -> AudioLab {
        try await offTheRunner { try startHere(devices: devices, bus: bus) }
    }

    /// Starts a lab with the named devices on this thread.
    private static func startHere(devices: [String], bus: [String]) throws -> AudioLab {
        let number = nextLabNumber()
        let prefix = "t\(getpid())_\(number)"
        let directory = temporaryPath("audio-lab-\(number)")
        try SpeechFixture.run(Self.script, [
            "start", "--dir", directory, "--prefix", prefix,
            "--devices", devices.joined(separator: ","), "--owner", "\(getpid())",
        ] + (bus.isEmpty ? [] : ["--bus", bus.joined(separator: ",")]))
        var environment: [String: String] = [:]
        for line in try SpeechFixture.run(Self.script, ["env", "--dir", directory]).split(separator: "\n") {
            // export NAME='value'
            guard let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].replacingOccurrences(of: "export ", with: "")
            environment[name] = String(line[line.index(after: equals)...]).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        let lab = AudioLab(devices: devices, directory: directory, prefix: prefix, environment: environment)
        try ALSAConfigurationOfThisProcess.add(lab)
        return lab
    }

    private init(devices: [String], directory: String, prefix: String, environment: [String: String]) {
        self.devices = devices
        self.directory = directory
        self.prefix = prefix
        self.environment = environment
    }

    deinit { stop() }

    /// The environment for a program that uses devices of several labs: each lab's ALSA
    /// devices name their own server, so only ALSA's configuration needs joining. Labs of a
    /// single device are how a device can vanish without PulseAudio moving its streams to
    /// another sink of the same server.
    public static func environment(combining labs: [AudioLab]) -> [String: String] {
        var environment = labs.first?.environment ?? [:]
        let files = labs.compactMap { $0.environment["ALSA_CONFIG_PATH"]?.split(separator: ":").dropFirst().map(String.init) }
        if let toplevel = labs.first?.alsaToplevelConfiguration {
            environment["ALSA_CONFIG_PATH"] = ([toplevel] + files.flatMap { $0 }).joined(separator: ":")
        }
        return environment
    }

    /// The ALSA PCM name of one of the lab's devices.
    public func alsaName(_ device: String) -> String { "\(prefix)_\(device)" }

    /// Plays a WAV file into a device's sink, as the sound reaching that microphone; the
    /// returned process ends when the file has played.
    public func inject(_ wav: URL, into device: String) throws -> ChildProcess {
        // Half a second of buffer, as a media player keeps: with 20 ms, paplay at normal
        // priority on a busy machine ran dry again and again, and the sink played silence in
        // between, so a sentence said into a microphone arrived chopped (0.16 correlation with
        // itself at load 11) and a paragraph took three times its length.
        try client("paplay", ["--latency-msec=500", "-d", device, wav.path])
    }

    /// Records what a device's sink plays, as raw 48 kHz mono 16-bit samples, until
    /// `finishRecording` stops it.
    public func record(_ device: String, to path: String) throws -> ChildProcess {
        try client("parec", [
            "--latency-msec=20", "-d", "\(device).monitor", "--raw", "--rate=48000", "--channels=1", "--format=s16le", path,
        ])
    }

    /// Records the bus (a lab started with `bus`): every bus device's sink, one channel each,
    /// sample-aligned on the one sink's clock, until `finishBusRecording` stops it. The
    /// recorder's own buffering is common to all channels, so a delay between two of them is
    /// the devices' alone.
    public func recordBus(channels: Int, to path: String) throws -> ChildProcess {
        try client("parec", [
            "--latency-msec=20", "-d", "bus.monitor", "--raw", "--rate=48000", "--channels=\(channels)",
            "--channel-map=" + (0..<channels).map { "aux\($0)" }.joined(separator: ","), "--format=s16le", path,
        ])
    }

    /// Stops a bus recording and returns each channel, in [-1, 1].
    public func finishBusRecording(_ recorder: ChildProcess, path: String, channels: Int) throws -> [[Float]] {
        let samples = try finishRecording(recorder, path: path)
        return (0..<channels).map { channel in stride(from: channel, to: samples.count - channels + 1, by: channels).map { samples[$0] } }
    }

    /// A PulseAudio client of this lab. Its signals are unblocked: it inherits the mask of the
    /// starting thread, which may block SIGTERM, and then could only be killed.
    private func client(_ tool: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess("/usr/bin/env", ["--default-signal", tool] + arguments, environment: environment)
    }

    /// Stops a recording and returns what it holds, in [-1, 1].
    public func finishRecording(_ recorder: ChildProcess, path: String) throws -> [Float] {
        recorder.signal(SIGTERM)
        recorder.wait(seconds: 5)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        return stride(from: 0, to: bytes.count - 1, by: 2).map {
            Float(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) / 32_768
        }
    }

    /// Routes what `speaker` plays into `microphone`, `delayMilliseconds` later and `gain`
    /// times as loud: an echo path from a peer's speaker to its own microphone, exact and
    /// fixed however busy the machine is, as a room's is (`audio-lab echo`: the speaker
    /// becomes a delay line inside the microphone's sink).
    public func addEchoPath(from speaker: String, into microphone: String, delayMilliseconds: Int, gain: Double = 1) throws {
        _ = try SpeechFixture.run(Self.script, [
            "echo", "--dir", directory, "--from", speaker, "--into", microphone,
            "--delay-ms", "\(delayMilliseconds)", "--gain", String(format: "%.4f", gain),
        ])
    }

    /// Routes what `speaker` plays into `microphone` through the acoustic lab's real-time
    /// path (`audio-lab room`, Docs/acoustic-lab.md): a soft-clipping loudspeaker and the
    /// room response `room` (a setup in scripts/lab/acoustic/rooms/rooms.json, such as
    /// "office-laptop" or "kitchen-pi"), plus whatever `options` ask for, e.g.
    /// ["--noise", "fan", "--noise-level", "-45"], ["--ppm", "300"],
    /// ["--change-at", "8", "--to", "office-laptop-lid"]. Its delay is the room's plus about
    /// 15 ms, constant within a run. Returns the path's PID, for `removeAcousticPath`; it also
    /// ends with the lab and when this process ends.
    @discardableResult
    public func addAcousticPath(from speaker: String, into microphone: String, room: String, options: [String] = []) throws -> Int32 {
        let output = try SpeechFixture.run(Self.script, [
            "room", "--dir", directory, "--from", speaker, "--into", microphone, "--room", room, "--owner", "\(getpid())",
        ] + options)
        guard let pid = Int32(output.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") else {
            throw FixtureError.toolFailed("audio-lab room", output)
        }
        return pid
    }

    /// Stops a path made by `addAcousticPath` with `--report FILE` among its options, and reads
    /// what it said of its run (nil if it wrote nothing).
    public func stopAcousticPath(_ pid: Int32, report: String) -> AcousticPathReport? {
        removeAcousticPath(pid)
        guard let data = FileManager.default.contents(atPath: report) else { return nil }
        return try? JSONDecoder().decode(AcousticPathReport.self, from: data)
    }

    /// Stops a path made by `addAcousticPath` and waits (up to 2 s) until it has ended.
    public func removeAcousticPath(_ pid: Int32) {
        kill(pid, SIGTERM)
        for _ in 0..<40 where kill(pid, 0) == 0 {
            usleep(50_000)
        }
    }

    /// Keeps one core busy (`audio-lab busy`: a shell spinning at normal priority, as a
    /// browser would beside a call) until `stopKeepingBusy` or the lab's end. Returns its PID.
    public func keepOneCoreBusy() throws -> Int32 {
        let output = try SpeechFixture.run(Self.script, ["busy", "--dir", directory, "--owner", "\(getpid())"])
        guard let pid = Int32(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FixtureError.toolFailed("audio-lab busy", output)
        }
        return pid
    }

    /// Stops a spinner started by `keepOneCoreBusy`.
    public func stopKeepingBusy(_ pid: Int32) {
        kill(pid, SIGTERM)
    }

    /// Runs `pactl` against this lab's server.
    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        try SpeechFixture.run("env", ["PULSE_SERVER=\(environment["PULSE_SERVER"] ?? "")", "pactl"] + arguments)
    }

    /// Removes a device, as a USB card that is pulled out.
    public func unplug(_ device: String) throws {
        try SpeechFixture.run(Self.script, ["unplug", device, "--dir", directory])
    }

    /// Brings back a device removed with `unplug`.
    public func plug(_ device: String) throws {
        try SpeechFixture.run(Self.script, ["plug", device, "--dir", directory])
    }

    /// Stops the server and every helper, by PID, and removes the lab's folder.
    public func stop() {
        stopLock.lock()
        defer { stopLock.unlock() }
        guard !stopped else { return }
        stopped = true
        ALSAConfigurationOfThisProcess.remove(self)
        _ = try? SpeechFixture.run(Self.script, ["stop", "--dir", directory])
    }

    /// This lab's ALSA device definitions.
    fileprivate func alsaConfiguration() throws -> String {
        try String(contentsOfFile: "\(directory)/asound.conf", encoding: .utf8)
    }

    fileprivate var alsaToplevelConfiguration: String? {
        environment["ALSA_CONFIG_PATH"]?.split(separator: ":").first.map(String.init)
    }

    private static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/lab/audio-lab").path

    private static let counterLock = NSLock()
    nonisolated(unsafe) private static var labCount = 0

    private static func nextLabNumber() -> Int {
        counterLock.lock()
        defer { counterLock.unlock() }
        labCount += 1
        return labCount
    }
}

/// ALSA reads one configuration per process, named by ALSA_CONFIG_PATH. This keeps one file
/// with the devices of every lab running in this process, and points ALSA_CONFIG_PATH at it
/// once, before the first lab's devices are opened.
///
/// alsa-lib reloads its configuration when a configuration file's inode or mtime changes.
/// Each version is therefore written as a file of its own, kept until the process ends so that
/// its inode is never reused, and hard-linked into place.
private enum ALSAConfigurationOfThisProcess {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var labs: [ObjectIdentifier: String] = [:]
    nonisolated(unsafe) private static var version = 0
    nonisolated(unsafe) private static var pathSet = false
    private static let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("intercom-alsa-configuration-\(getpid())").path
    private static var current: String { "\(folder)/current.conf" }

    static func add(_ lab: AudioLab) throws {
        lock.lock()
        defer { lock.unlock() }
        labs[ObjectIdentifier(lab)] = try lab.alsaConfiguration()
        try writeVersion()
        if !pathSet, let toplevel = lab.alsaToplevelConfiguration {
            setenv("ALSA_CONFIG_PATH", "\(toplevel):\(current)", 1)
            pathSet = true
            removeFoldersOfEndedProcesses()
            atexit { try? FileManager.default.removeItem(atPath: ALSAConfigurationOfThisProcess.folder) }
        }
    }

    static func remove(_ lab: AudioLab) {
        lock.lock()
        defer { lock.unlock() }
        guard labs.removeValue(forKey: ObjectIdentifier(lab)) != nil else { return }
        try? writeVersion()
    }

    /// A test process that was killed left its folder behind.
    private static func removeFoldersOfEndedProcesses() {
        let temporary = FileManager.default.temporaryDirectory
        let prefix = "intercom-alsa-configuration-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
        }
    }

    private static func writeVersion() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        version += 1
        let path = "\(folder)/version-\(version).conf"
        try labs.values.sorted().joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let staging = "\(folder)/staging.conf"
        try? FileManager.default.removeItem(atPath: staging)
        guard link(path, staging) == 0, rename(staging, current) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: current])
        }
    }
}

/// What an acoustic path of the lab said of its run (`scripts/lab/acoustic/realtime.py --report`),
/// from its block-by-block notes with its first and last second left out (its queues filling,
/// its own stopping).
public struct AcousticPathReport: Decodable, Sendable {
    /// How much of the speaker's sound the path had not read yet, in microseconds.
    public struct Behind: Decodable, Sendable {
        public let max: Int
        public let p99: Int
    }

    /// What the path had queued for the microphone, in microseconds, and after how many blocks
    /// the queue was empty.
    public struct Queued: Decodable, Sendable {
        public let min: Int
        public let emptyBlocks: Int

        enum CodingKeys: String, CodingKey {
            case min
            case emptyBlocks = "empty_blocks"
        }
    }

    /// From the speaker's sound to the microphone's through the path's two queues (what it had
    /// not read and what it had queued), in microseconds, to within a block.
    public struct Through: Decodable, Sendable {
        public let min: Int
        public let median: Int
        public let max: Int
    }

    public let behindMicroseconds: Behind
    public let queuedMicroseconds: Queued
    public let throughMicroseconds: Through

    /// The most the path fell behind the speaker it reads, in milliseconds.
    public var fellBehindMilliseconds: Double { Double(behindMicroseconds.max) / 1_000 }

    /// Whether the lab moved the echo during the run, as the path judged it: it fell behind by
    /// more than the microphone's queue held, so the microphone's stream ran dry and started
    /// again later (a 20 ms stop of the path moved the echo by 14 ms). Falling behind by less
    /// moves nothing. An echo path change the lab made, which a call judged on a steady path
    /// does not ask for.
    public let movedTheEcho: Bool

    enum CodingKeys: String, CodingKey {
        case behindMicroseconds = "behind_us"
        case queuedMicroseconds = "queued_us"
        case throughMicroseconds = "through_us"
        case movedTheEcho = "moved_the_echo"
    }
}
