import FoundationEssentials
import IntercomCore
import IntercomDSP
import IntercomIO
import IntercomSecurity
import Logging
import Synchronization

/// One peer in a call: owns the socket and the three threads (capture, playback, network)
/// and the rings between them, and stops them in an order that loses nothing.
///
/// `@unchecked` because of the three pipelines, which are not `Sendable`: each is used by its
/// own thread only once the call starts, and other threads reach only their `Sendable` parts
/// (controls, counters, snapshots behind a lock or an atomic). Everything else here is a
/// constant or behind a lock or an atomic.
public final class Call: @unchecked Sendable {
    public let configuration: CallConfiguration
    public let ssrc: UInt32
    private let socket: UDPSocket
    private let poller: Poller
    private let capture: CapturePipeline
    private let playback: PlaybackPipeline
    private let network: NetworkLoop
    private let sink: AudioSink
    /// The sound devices' names and counters (none for files), readable from any thread.
    private let captureDevice: (name: String, counters: ALSAStreamCounters)?
    private let playbackDevice: (name: String, counters: ALSAStreamCounters)?
    private let logger: Logger
    /// Peers found or lost by discovery, or named by a reloaded configuration.
    private let directory = PeerDirectory()
    private let stopAudio = SharedFlag()
    private let stopNetwork = SharedFlag()
    /// The three real-time loops' turns, for the watchdog.
    private let loops: (capture: LoopTurns, playback: LoopTurns, network: LoopTurns)
    /// The turns counted at the last watchdog check (none before the first).
    private let turnsAtLastCheck = Mutex<[UInt64]?>(nil)
    /// The running threads; held while the call starts or stops, so that two stops (a signal's
    /// and the owner's) do not both join.
    private let threads = Mutex<[JoinableThread]>([])
    /// `threadsRunInRealTime` of the threads a stop joined (taken under `threads`' lock).
    private let stoppedThreadsRanInRealTime = Mutex<Bool?>(nil)
    private let startedAt = SystemClock.monotonicNanoseconds()
    /// CLOCK_REALTIME nanoseconds of the talk key's presses as the call got them, the first
    /// `Self.talkKeyPressesKept`: what a measurement from outside times the far end's ear from.
    private let talkKeyPresses = Mutex<[UInt64]>([])
    private static let talkKeyPressesKept = 64
    /// Whom we talk to (`chosen`, or while a talk button with a target of its own is held,
    /// `held`, or while a page plays, `paging`) and the rooms we belong to.
    private let announced: Mutex<Targets>
    private typealias Targets = (chosen: CallTarget, held: CallTarget?, paging: CallTarget?, rooms: [GroupName])
    /// A page sent in place of the microphone (`DaemonPage`).
    let pageFeed = PageFeed()
    /// How discovery is doing (`DiscoveryStatus`), set by `CallDiscovery`.
    private let discoveryStatus = Atomic<DiscoveryStatus>(.off)
    /// When the call was set up (monotonic ns): discovery times count from here.
    public var startedAtNanoseconds: UInt64 { startedAt }

    /// The UDP port the call listens on (useful when 0 was asked for).
    public var localPort: UInt16 { socket.localPort }

    public init(configuration: CallConfiguration, source: AudioSource, sink: AudioSink, logger: Logger) throws {
        self.configuration = configuration
        self.sink = sink
        captureDevice = (source as? ALSACaptureSource).map { ($0.device, $0.counters) }
        playbackDevice = (sink as? ALSAPlaybackSink).map { ($0.device, $0.counters) }
        self.logger = logger
        announced = Mutex((configuration.target, nil, nil, configuration.rooms))
        guard (0...65535).contains(configuration.port) else {
            throw CallError.invalidPort(configuration.port)
        }
        socket = try configuration.bindAddress.map { address throws(NetworkError) in
            try UDPSocket(boundTo: address.with(port: UInt16(configuration.port)))
        } ?? UDPSocket(port: UInt16(configuration.port))
        poller = try Poller(watching: [socket])
        var generator = SystemRandomNumberGenerator()
        let stream = OutgoingStream(using: &generator)
        ssrc = stream.ssrc
        // A few hundred milliseconds of packets each way: enough for any scheduling hiccup.
        let outbox = RecyclingRing<[UInt8]>(capacity: 64) { ReceivedPacket.spareStorage() }
        let inbox = RecyclingRing<ReceivedPacket>(capacity: 256) { .spare(ReceivedPacket.spareStorage()) }
        let captureCounters = CaptureStatistics()
        let linkFeedback = LinkFeedbackChannel()
        let echoReference = EchoReference(frameLength: configuration.period)
        let poller = poller
        playback = try PlaybackPipeline(sink: sink, configuration: configuration, inbox: inbox, echoReference: echoReference)
        capture = try CapturePipeline(
            source: source, configuration: configuration, stream: stream, echoReference: echoReference,
            localTones: playback.localTones, pageFeed: pageFeed, outbox: outbox, counters: captureCounters,
            linkFeedback: linkFeedback, wakeNetwork: { poller.wake() }
        )
        network = NetworkLoop(
            socket: socket, poller: poller, configuration: configuration, ssrc: ssrc,
            outbox: outbox, inbox: inbox, capture: captureCounters, linkFeedback: linkFeedback, directory: directory, logger: logger
        )
        let stall = configuration.stallForTesting.map { ($0.thread, SystemClock.monotonicNanoseconds() + MediaTime.nanoseconds($0.after)) }
        func loop(_ thread: String, _ stop: SharedFlag) -> LoopTurns {
            LoopTurns(thread: thread, stop: stop, stallAt: stall?.0 == thread ? stall?.1 : nil)
        }
        loops = (loop("capture", stopAudio), loop("playback", stopAudio), loop("network", stopNetwork))
    }

    deinit { stop() }

    /// Starts the three threads.
    public func start() throws {
        // Each pipeline is used by its own thread only, from here on.
        let (capture, playback, network) = (self.capture, self.playback, self.network)
        let loops = self.loops
        try network.startHelpers()
        // Arrivals are stamped on the network thread: a late wake-up would pass for network jitter.
        // Each is listed as soon as it runs, so that a failure to start the next still stops it.
        let networkThread = try JoinableThread(name: "network", realtime: true) { network.run(loops.network) }
        threads.withLock { $0.append(networkThread) }
        let playbackThread = try JoinableThread(name: "playback", realtime: true) { playback.run(loops.playback) }
        threads.withLock { $0.append(playbackThread) }
        let captureThread = try JoinableThread(name: "capture", realtime: true) { capture.run(loops.capture) }
        threads.withLock { $0.append(captureThread) }
        logger.info("call started", metadata: [
            "port": "\(localPort)", "ssrc": "\(ssrc)", "peers": "\(configuration.staticPeers.map(\.description))",
            "mode": "\(configuration.mode.rawValue)",
        ])
    }

    /// Push-to-talk: whether the talk key or button is held now. Any thread; never blocks.
    public func setTalkKey(held: Bool) {
        let wasHeld = capture.controls.talkKeyHeld.exchange(held, ordering: .relaxed)
        guard held, !wasHeld else { return }
        let now = SystemClock.realtimeNanoseconds()
        talkKeyPresses.withLock { presses in
            if presses.count < Self.talkKeyPressesKept { presses.append(now) }
        }
    }

    /// Mutes or unmutes our microphone, whatever the talk mode.
    public func setMuted(_ muted: Bool) {
        capture.controls.muted.store(muted, ordering: .relaxed)
    }

    /// The talk mode in force.
    public var mode: TalkMode { capture.controls.mode.load(ordering: .relaxed) }

    /// Changes when we transmit, while the call goes on.
    public func setMode(_ mode: TalkMode) {
        capture.controls.mode.store(mode, ordering: .relaxed)
    }

    /// Changes the speech probability (percent) that opens the VOX gate, while the call goes on.
    public func setVoxThreshold(_ percent: Int) {
        capture.controls.voxThreshold.store(min(99, max(1, percent)), ordering: .relaxed)
    }

    /// Adds a peer to call, while the call goes on.
    public func addPeer(_ address: SocketAddress) {
        discovered(.configured(address))
    }

    /// Whether we are sending audio now.
    public var isTransmitting: Bool { capture.counters.talking.load(ordering: .relaxed) }

    /// Peak level of our microphone's last frame, 0…1.
    public var microphoneLevel: Double { Double(capture.counters.level.load(ordering: .relaxed)) / 32768 }

    /// Changes whom we talk to (the number keys, a reload), while the call goes on: the next
    /// packet goes to the new target's devices only, and every peer is told at once. Any thread.
    public func setTarget(_ target: CallTarget) {
        announce { $0.chosen = target }
    }

    /// While a talk button with a target of its own is held, whom we talk to instead of the
    /// chosen target (nil: the chosen one again). Any thread.
    public func holdTarget(_ target: CallTarget?) {
        announce { $0.held = target }
    }

    /// While a page plays in place of the microphone, whom it goes to, before a held button's
    /// target or the chosen one (nil: those again). Any thread.
    func pageTarget(_ target: CallTarget?) {
        announce { $0.paging = target }
    }

    /// Changes the rooms we belong to (a reload); the peers hear of it at once. Any thread.
    public func setRooms(_ rooms: [GroupName]) {
        announce { $0.rooms = rooms }
    }

    /// Hands the network thread what its hellos and its sending follow, made here rather than
    /// on that thread (the target's matcher allocates).
    private func announce(_ change: (inout Targets) -> Void) {
        announced.withLock { announced in
            change(&announced)
            let next = Announcement(target: announced.paging ?? announced.held ?? announced.chosen, rooms: announced.rooms)
            network.pendingAnnouncement.withLock { $0 = next }
        }
        poller.wake()
    }

    /// The rooms we belong to now.
    public var rooms: [GroupName] { announced.withLock { $0.rooms } }

    /// Whom we talk to now (a page's target while one plays, a held talk button's, else the chosen one).
    public var target: CallTarget { announced.withLock { $0.paging ?? $0.held ?? $0.chosen } }

    /// How many devices `target` reaches now, once the network thread sends to it (nil
    /// before): in an encrypted call to everyone, those with a session; for a room or a
    /// device, those a hello or a session shows to be in it.
    func devicesReached(by target: CallTarget) -> Int? {
        let encrypted = configuration.security != nil
        // Counted under the lock: a copy of the snapshot's lists would make the network thread
        // allocate when it next fills them.
        return network.snapshot.read { snapshot -> Int? in
            guard snapshot.target == target else { return nil }
            guard target == .all else { return snapshot.targetReaches }
            return snapshot.peers.count { !encrypted || $0.fingerprint != nil }
        }
    }

    /// Whom we talk to when no talk button with a target of its own is held.
    public var chosenTarget: CallTarget { announced.withLock { $0.chosen } }

    /// Sets how loud one peer's stream plays (1 = as sent). Call from one thread only.
    public func setVolume(_ gain: Float, ssrc: UInt32) {
        playback.gains.push((ssrc, gain))
    }

    /// The trusted list was changed by this process (a remembered volume): the call reads it
    /// now rather than within the second it otherwise takes.
    public func trustedListChanged() {
        network.trustedListChanged()
    }

    /// The paired devices as the call last read them, and news of their changes (nil in a plain call).
    var trustedList: TrustedList? { network.trustedList }

    /// Tells the call about a peer that discovery found or lost, or the user named.
    public func discovered(_ change: PeerDirectoryChange<SocketAddress>) {
        directory.post(change)
        poller.wake()
    }

    /// The real-time threads that have not turned their loop since the last check: a watchdog
    /// pings only while this is empty. Call from one task only.
    public func stuckThreads() -> [String] {
        let all = [loops.capture, loops.playback, loops.network]
        let now = all.map(\.count)
        // The first check only starts the count: the threads may not have begun their first turn.
        guard let before = turnsAtLastCheck.withLock({ last in
            defer { last = now }
            return last
        }) else { return [] }
        return zip(all, zip(before, now)).filter { $0.1.0 == $0.1.1 }.map(\.0.thread)
    }

    /// Discovery's news, for the status screen and `intercom status`.
    public func setDiscoveryStatus(_ status: DiscoveryStatus) {
        discoveryStatus.store(status, ordering: .relaxed)
    }

    /// Leaves the call: audio threads first (the last frame is sent), then the network
    /// thread, which says BYE; then the output is finished. Safe to call more than once.
    public func stop() {
        threads.withLock { threads in
            guard !stopNetwork.value.load(ordering: .relaxed) || !threads.isEmpty else { return }
            stopAudio.value.store(true, ordering: .relaxed)
            for thread in threads where thread.name != "network" { thread.join() }
            stopNetwork.value.store(true, ordering: .relaxed)
            poller.wake()
            for thread in threads { thread.join() }
            let ranInRealTime = Self.runInRealTime(threads)
            stoppedThreadsRanInRealTime.withLock { $0 = ranInRealTime }
            threads.removeAll()
            finish()
        }
    }

    /// After the threads: the helpers stopped, the output finished, the paired devices heard
    /// noted as seen.
    private func finish() {
        network.stopHelpers()
        sink.close()
        // Paired devices heard in this call were seen now (`intercom paired`).
        if let security = configuration.security {
            let seen = network.snapshot.read { $0.devicesSeen }
            do {
                let others = seen.subtracting([DeviceKey(security.identity.publicKey)])
                try security.trustedDevices.markSeen(Set(others.map(\.bytes)), at: Date())
            } catch {
                logger.warning("could not note when paired devices were last seen: \(error)")
            }
        }
    }

    /// Whether the call's threads run at the real-time priority they ask for: false when
    /// any was refused it (a user without RLIMIT_RTPRIO), nil until they have all asked.
    /// Once the call has stopped, what they ran at.
    public var threadsRunInRealTime: Bool? {
        threads.withLock { $0.isEmpty ? stoppedThreadsRanInRealTime.withLock { $0 } : Self.runInRealTime($0) }
    }

    private static func runInRealTime(_ threads: [JoinableThread]) -> Bool? {
        let granted = threads.map(\.runsInRealTime)
        if granted.contains(false) { return false }
        return granted.isEmpty || granted.contains(nil) ? nil : true
    }

    /// Figures for the stats file and status displays.
    public func statistics() -> CallStatistics {
        var figures = CallStatistics(
            playback: playback.snapshot.withLock { $0.detached() },
            network: network.snapshot.read { $0.detached() },
            networkCounters: network.counters,
            captureCounters: capture.counters,
            devices: (
                capture: captureDevice.map { .init(name: $0.name, counters: $0.counters) },
                playback: playbackDevice.map { .init(name: $0.name, counters: $0.counters) }
            ),
            inputStart: capture.counters.firstSampleTime.load(ordering: .relaxed),
            outputStart: sink.firstSampleTime?.nanosecondsSince1970 ?? 0,
            runningSeconds: MediaTime.seconds(nanoseconds: Double(SystemClock.monotonicNanoseconds() - startedAt)),
            discovery: discoveryStatus.load(ordering: .relaxed),
            talkKeyPresses: talkKeyPresses.withLock { $0 }, target: target
        )
        figures.realtimeThreads = threadsRunInRealTime
        return figures
    }
}

/// Whether the call finds and announces peers by mDNS.
public enum DiscoveryStatus: String, Codable, Sendable, CaseIterable {
    /// `--no-discovery`.
    case off
    case running
    /// avahi-daemon is not there (or refused us): only peers named with --peer are called.
    case unavailable

    /// In words, for the status displays.
    public var fault: String? {
        self == .unavailable ? "discovery unavailable (no avahi-daemon): only --peer peers are called" : nil
    }
}

public enum CallError: Error, CustomStringConvertible {
    case invalidPort(Int)

    public var description: String {
        switch self {
        case .invalidPort(let port): "port \(port) is not from 0 to 65535"
        }
    }
}

/// Held in an `Atomic`: set by discovery's thread, read by the status.
extension DiscoveryStatus: AtomicCase {
    public static let atomicOrder: [DiscoveryStatus] = [.off, .running, .unavailable]
}
