import FoundationEssentials
import IntercomCore
import IntercomIO

/// The figures of a call, written as JSON by `--stats-json` (keys in snake_case).
public struct CallStatistics: Codable, Sendable {
    /// Totals over every incoming stream, as the jitter buffers counted them.
    public var received = 0
    public var lost = 0
    public var recoveredFec = 0
    public var concealed = 0
    public var late = 0
    public var duplicated = 0
    /// The largest of the streams' figures.
    public var currentDelayMs = 0.0
    public var targetDelayMs = 0.0
    public var jitterMs = 0.0
    /// How long what playback writes now waits before it is heard: the sound device's queue
    /// (with a sound server's own, as ALSA reports it) and the resampler; 0 for a file.
    public var speakerQueueMs = 0.0
    /// CLOCK_REALTIME nanoseconds of the first sample of the input and of the output, so
    /// that the delay between two processes can be measured from outside.
    public var inputStartNs: UInt64 = 0
    public var outputStartNs: UInt64 = 0
    /// CLOCK_REALTIME nanoseconds of the talk key's presses (terminal, button or GPIO line)
    /// as the call got them, the first 64: key-to-ear measured from outside starts here, apart
    /// from the time the key took to reach the program.
    public var talkKeyPressesNs: [UInt64] = []
    /// What we sent: RTP packets and their payload bytes; all datagrams and their bytes.
    public var sentPackets = 0
    public var sentPayloadBytes = 0
    public var datagramsSent = 0
    public var bytesSent = 0
    public var datagramsReceived = 0
    /// Received datagrams accepted as RTP (handed to playback) and as RTCP.
    public var rtpReceived = 0
    public var rtcpReceived = 0
    /// The loss rate our encoder's in-band FEC is sized for now, following the peers' reports.
    public var fecExpectedLossPercent = 0
    /// Our encoder's bitrate now: the one chosen, or less while many devices hear us (`ListenerBudget`).
    public var bitrate = 0
    /// The encoder of our last frame: low delay or robust (adaptive codec), or fixed.
    public var codecMode = CodecMode.fixed
    /// Times the echo canceller's reference jumped to follow the devices' timestamps (a device
    /// restart, or timestamps off by more than 8 ms before the signals found the echo, by more
    /// than 100 ms after): each makes it learn the echo path again.
    public var echoReferenceResyncs = 0
    /// Times the timestamps had been off long enough to re-sync while the canceller still
    /// cancelled the echo where the reference was: not followed.
    public var echoReferenceResyncsRefused = 0
    /// Times the reference moved to follow the echo the signals found (an underrun moved it),
    /// so that the canceller's filter still fits.
    public var echoDelayCorrections = 0
    /// The first 16 of those moves.
    public var echoMoves: [EchoMoveFigures] = []
    /// Moves the delay estimator called for while the canceller still cancelled the echo
    /// where it was: not made.
    public var echoMovesRefused = 0
    /// The echo's delay behind the canceller's reference, once the signals have found it.
    public var echoDelayMs: Double?
    public var dropped = Dropped()
    public var faults = Faults()
    /// The sound devices; nil for an endpoint that is a file.
    public var captureDevice: DeviceStatistics?
    public var playbackDevice: DeviceStatistics?
    public var streams: [StreamStatistics] = []
    public var peers: [PeerSnapshot] = []
    /// Whom we talk to (`all`, `room:NAME` or a device), and how many peers that reaches now.
    public var to = CallTarget.all.description
    public var toPeers = 0
    public var security = SecurityStatistics.unencrypted
    public var runningSeconds = 0.0
    /// Whether the capture, playback and network threads run at real-time priority (false:
    /// refused, so a loaded machine can delay them); nil before they have started.
    public var realtimeThreads: Bool?
    public var discovery = DiscoveryStatus.off

    /// A move of the canceller's reference to follow the echo (`EchoMove`).
    public struct EchoMoveFigures: Codable, Sendable, Equatable {
        /// Seconds into the call (from the microphone's first frame) of the frame that found it.
        public var atSeconds: Double
        /// How far the echo moved: later when positive.
        public var ms: Double
        /// What found it: `delayEstimator` or `cancellerPrediction`.
        public var finder: String

        init(_ move: EchoMove, callStart: UInt64) {
            atSeconds = Double(Int64(bitPattern: move.capturedAt &- callStart)) / 1e9
            ms = MediaTime.milliseconds(samples: Double(move.samples))
            finder = "\(move.finder)"
        }
    }

    /// Datagrams dropped unplayed, by reason.
    public struct Dropped: Codable, Sendable {
        public var malformed = 0
        public var wrongVersion = 0
        public var wrongPayloadType = 0
        public var tooLarge = 0
        public var refusedPeer = 0
        /// RTP whose SSRC belongs to another peer.
        public var foreignSsrc = 0
        public var unsupportedHello = 0
        public var inboxFull = 0
        public var undecodable = 0
        public var unvalidated = 0
        /// RTP with our own SSRC: our stream coming back to us.
        public var ownPackets = 0
        /// Pages refused here (`--no-pages`).
        public var pagesRefused = 0
    }

    /// Things that went wrong on our side, each counted once per datagram, packet or frame lost.
    public struct Faults: Codable, Sendable {
        /// Datagrams the socket refused to send, and socket errors on receiving.
        public var sendErrors = 0
        public var receiveErrors = 0
        /// Packets the capture thread could not queue because the network thread fell behind.
        public var outboxFull = 0
        /// Frames lost to an error reading the microphone or file, cleaning, or encoding.
        public var captureErrors = 0
        /// Periods the speaker or output file failed to take.
        public var playbackErrors = 0

        /// Their sum: zero in a call where nothing went wrong.
        public var total: Int { sendErrors + receiveErrors + outboxFull + captureErrors + playbackErrors }
    }

    /// What befell one sound device during the call.
    public struct DeviceStatistics: Codable, Sendable {
        public var name: String
        /// Whether it is open (in the figures written at exit: whether it was open at the end);
        /// while it is not, capture hears silence and playback goes nowhere.
        public var open: Bool
        /// Underruns (playback) or overruns (capture), each recovered.
        public var xruns: Int
        /// Times it became unavailable (missing at start, or failing in use), and came back.
        public var faults: Int
        public var recoveries: Int

        init(name: String, counters: ALSAStreamCounters) {
            self.name = name
            open = counters.isDeviceOpen
            xruns = counters.xruns
            faults = counters.faults
            recoveries = counters.recoveries
        }
    }

    init(
        playback: PlaybackSnapshot, network: NetworkSnapshot, networkCounters: NetworkCounters,
        captureCounters: CaptureStatistics, devices: (capture: DeviceStatistics?, playback: DeviceStatistics?),
        inputStart: UInt64, outputStart: UInt64, runningSeconds: Double,
        discovery: DiscoveryStatus = .off, talkKeyPresses: [UInt64] = [], target: CallTarget = .all
    ) {
        streams = playback.streams
        for index in streams.indices {
            guard let sender = network.peers.first(where: { $0.ssrc == streams[index].ssrc }) else { continue }
            streams[index].peer = sender.name ?? sender.address
            streams[index].to = sender.to
        }
        for stream in streams {
            received += stream.received
            lost += stream.lost
            recoveredFec += stream.recoveredFec
            concealed += stream.concealed
            late += stream.late
            duplicated += stream.duplicated
            currentDelayMs = max(currentDelayMs, stream.currentDelayMs)
            targetDelayMs = max(targetDelayMs, stream.targetDelayMs)
            jitterMs = max(jitterMs, stream.jitterMs)
        }
        speakerQueueMs = MediaTime.milliseconds(nanoseconds: Double(playback.speakerQueue))
        inputStartNs = inputStart
        outputStartNs = outputStart
        talkKeyPressesNs = talkKeyPresses
        echoReferenceResyncs = captureCounters.echoReferenceResyncs.load(ordering: .relaxed)
        echoReferenceResyncsRefused = captureCounters.echoReferenceResyncsRefused.load(ordering: .relaxed)
        echoDelayCorrections = captureCounters.echoDelayCorrections.load(ordering: .relaxed)
        echoMovesRefused = captureCounters.echoMovesRefused.load(ordering: .relaxed)
        let callStart = captureCounters.firstFrameCaptureTime.load(ordering: .relaxed)
        echoMoves = captureCounters.recordedEchoMoves().map { EchoMoveFigures($0, callStart: callStart) }
        let echoDelay = captureCounters.echoDelaySamples.load(ordering: .relaxed)
        echoDelayMs = echoDelay == CaptureStatistics.unknownEchoDelay ? nil : MediaTime.milliseconds(samples: Double(echoDelay))
        sentPackets = captureCounters.sentPackets.load(ordering: .relaxed)
        sentPayloadBytes = captureCounters.sentOctets.load(ordering: .relaxed)
        datagramsSent = networkCounters.datagramsSent.load(ordering: .relaxed)
        bytesSent = networkCounters.bytesSent.load(ordering: .relaxed)
        datagramsReceived = networkCounters.datagramsReceived.load(ordering: .relaxed)
        rtpReceived = networkCounters.rtpReceived.load(ordering: .relaxed)
        rtcpReceived = networkCounters.rtcpReceived.load(ordering: .relaxed)
        fecExpectedLossPercent = captureCounters.expectedLossPercent.load(ordering: .relaxed)
        bitrate = captureCounters.bitrate.load(ordering: .relaxed)
        codecMode = captureCounters.codecMode.load(ordering: .relaxed)
        dropped = Dropped(
            malformed: networkCounters.malformed.load(ordering: .relaxed),
            wrongVersion: networkCounters.wrongVersion.load(ordering: .relaxed),
            wrongPayloadType: networkCounters.wrongPayloadType.load(ordering: .relaxed),
            tooLarge: networkCounters.tooLarge.load(ordering: .relaxed),
            refusedPeer: networkCounters.refusedPeer.load(ordering: .relaxed),
            foreignSsrc: networkCounters.foreignSSRC.load(ordering: .relaxed),
            unsupportedHello: networkCounters.unsupportedHello.load(ordering: .relaxed),
            inboxFull: networkCounters.inboxFull.load(ordering: .relaxed),
            undecodable: playback.undecodable,
            unvalidated: networkCounters.unvalidated.load(ordering: .relaxed),
            ownPackets: networkCounters.ownPackets.load(ordering: .relaxed),
            pagesRefused: networkCounters.pagesRefused.load(ordering: .relaxed)
        )
        faults = Faults(
            sendErrors: networkCounters.sendErrors.load(ordering: .relaxed),
            receiveErrors: networkCounters.receiveErrors.load(ordering: .relaxed),
            outboxFull: captureCounters.outboxFull.load(ordering: .relaxed),
            captureErrors: captureCounters.errors.load(ordering: .relaxed),
            playbackErrors: playback.sinkErrors
        )
        captureDevice = devices.capture
        playbackDevice = devices.playback
        peers = network.peers
        to = TerminalText.sanitized(target.description)
        toPeers = network.targetReaches
        security = network.security
        security.unsentNoSession = networkCounters.unsentNoSession.load(ordering: .relaxed)
        self.runningSeconds = runningSeconds
        self.discovery = discovery
    }

    public func jsonData() throws -> Data {
        try FiguresJSON.encoder(pretty: true).encode(self)
    }

    /// Reads back what `jsonData()` wrote.
    public init(json: Data) throws {
        self = try FiguresJSON.decoder().decode(Self.self, from: json)
    }
}

/// How the call's figures are written as JSON (`--stats-json`, the status socket) and read back:
/// keys in snake_case.
enum FiguresJSON {
    static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }
}

/// One incoming stream's figures.
public struct StreamStatistics: Codable, Sendable {
    public var ssrc: UInt32
    public var received: Int
    public var lost: Int
    public var recoveredFec: Int
    public var concealed: Int
    public var late: Int
    public var duplicated: Int
    public var currentDelayMs: Double
    public var targetDelayMs: Double
    public var jitterMs: Double
    /// What the jitter buffer judges calm by: the typical recent arrival delay against the
    /// delay budgeted for the network (calm below a quarter of it, or while the recent delays'
    /// tail is below 60 % of it), and how long it has been calm.
    public var typicalArrivalDelayMs: Double
    public var networkBudgetMs: Double
    public var calmSeconds: Double
    public var playoutRate: Double
    /// RMS of the last period played, 0...1.
    public var level: Double
    /// Whose stream it is (the peer's name as shown), and whom it talks to as far as we are
    /// concerned ("to all", "to kitchen", "to you"): nil while no peer sends it.
    public var peer: String?
    public var to: String?
    /// Whether it is a page, played over the others (which are turned down meanwhile).
    public var page = false
}

extension StreamStatistics {
    init(stream: (ssrc: UInt32, statistics: JitterBufferStatistics, level: Float, playoutRate: Double)) {
        let statistics = stream.statistics
        self.init(
            ssrc: stream.ssrc, received: statistics.received, lost: statistics.lost,
            recoveredFec: statistics.recoveredByFEC, concealed: statistics.concealed,
            late: statistics.late, duplicated: statistics.duplicated,
            currentDelayMs: MediaTime.milliseconds(nanoseconds: Double(statistics.currentDelay)),
            targetDelayMs: MediaTime.milliseconds(nanoseconds: Double(statistics.targetDelay)),
            jitterMs: MediaTime.milliseconds(nanoseconds: statistics.interarrivalJitterNanoseconds),
            typicalArrivalDelayMs: MediaTime.milliseconds(nanoseconds: Double(statistics.typicalArrivalDelay)),
            networkBudgetMs: MediaTime.milliseconds(nanoseconds: Double(statistics.networkBudget)),
            calmSeconds: MediaTime.seconds(nanoseconds: Double(statistics.calmDuration)),
            playoutRate: stream.playoutRate, level: Double(stream.level)
        )
    }
}
