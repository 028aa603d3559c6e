import IntercomCore
import IntercomDSP
import IntercomIO
import Synchronization

/// The send path, run frame by frame on the capture thread: microphone → cleaner (echo
/// canceller → preprocessor: denoise, AGC, residual echo, voice activity) → talk gate →
/// Opus → RTP → outbox ring for the network thread.
///
/// When the codec adapts (`CallConfiguration.adaptsCodec`) each 5 ms period goes either to
/// the low-delay encoder as a frame of its own, or into a 10 ms frame for the robust one
/// (`CodecModeController` chooses, from the peers' reports and the voice activity); the switch
/// to low delay waits for a robust frame to be complete.
///
/// Nothing here waits on the network or a lock: the outbox refuses packets when full.
final class CapturePipeline {
    private let source: AudioSource
    /// The robust encoder (SILK or hybrid, FEC, DTX), or the only one when the codec does not adapt.
    private let encoder: OpusEncoder
    /// The low-delay encoder (5 ms frames of restricted low-delay CELT), with the adaptive codec only.
    private let lowDelayEncoder: OpusEncoder?
    private var modes = CodecModeController()
    /// Which encoder coded the last frame, so that one taking over starts afresh.
    private var encoding: CodecMode
    /// Captured periods gathering into one robust frame; those not to be sent are silenced.
    private var robustFrame: [Int16] = []
    private var robustFrameTalking = false
    /// Whether a period gathered into `robustFrame` held voice: a frame begun in silence is
    /// not kept waiting for its second half when a voice starts (see `captureOneFrame`).
    private var robustFrameVoiced = false
    /// Whether the last frame was encoded: an encoder that stood idle (talk key up, gate
    /// closed) starts its next talkspurt from a reset state, not from audio of the last one.
    private var lastFrameEncoded = false
    /// Whether the last period held voice: the robust encoder hands over to the low-delay one
    /// after a quiet period rather than inside a word (the encoders' lookaheads differ by 4 ms,
    /// which a switch skips), unless no such period came for `handOverWait` since low delay
    /// was wanted.
    private var lastPeriodVoiced = false
    private var lowDelayWantedSince: UInt64?
    private static let handOverWait = MediaTime.nanoseconds(.seconds(1))
    private let echoReference: EchoReference
    /// Lines what the speaker played up with each microphone frame.
    private var echoAlignment: EchoAlignment
    /// Measures voice activity for VOX, and cleans live input (echo, noise, level).
    private let cleaner: MicrophoneCleaner
    private var gate = VoiceActivityGate.vox
    /// VOX's pre-roll: in VOX mode what is sent starts this far behind the microphone, so that
    /// a word's start, heard before the detector is sure of it, goes out with it; the pauses of
    /// the talkspurt then take the delay out again (`PrerollLine`).
    private var preroll: PrerollLine
    /// The preprocessor settings in force, to notice a changed VOX threshold.
    private var cleaning: PreprocessorConfiguration
    private var stream: OutgoingStream
    private let payloadType: UInt8
    private let pagePayloadType: UInt8
    /// A page to send in place of the microphone, and whether the frame being sent is one.
    private let pageFeed: PageFeed
    private var sendingPage = false
    private let outbox: RecyclingRing<[UInt8]>
    private let wakeNetwork: () -> Void
    private var frame: [Int16]
    /// What the speaker played while `frame` was captured, for the echo canceller (kept, so that it is not allocated per frame).
    private var echoFrame: [Int16]
    private let frameNanoseconds: UInt64
    private let talkTones: Bool
    private let localTones: SPSCRing<[Float]>
    /// Tone samples still to mix into outgoing frames.
    private var pendingTone: ArraySlice<Float> = []
    private var gateWasOpen = false
    /// Brings the talk key's own click down at the start of each push-to-talk transmission; it
    /// hears every frame, the gate shut or open, to know the level before the press.
    private var clickGuard = TalkKeyClickGuard()
    private var lossAdaptation: LossAdaptation
    /// The bitrate and frames for the devices our stream goes to.
    private let listenerBudget: ListenerBudget
    private var bitrate: Int
    private var lastLossReport = 0
    let counters: CaptureStatistics
    let controls: CaptureControls
    private let linkFeedback: LinkFeedbackChannel

    init(
        source: AudioSource, configuration: CallConfiguration, stream: OutgoingStream, echoReference: EchoReference,
        localTones: SPSCRing<[Float]>, pageFeed: PageFeed, outbox: RecyclingRing<[UInt8]>, counters: CaptureStatistics,
        linkFeedback: LinkFeedbackChannel, wakeNetwork: @escaping () -> Void
    ) throws {
        talkTones = configuration.talkTones
        lossAdaptation = LossAdaptation(initialPercent: configuration.encoder.expectedLossPercent)
        counters.expectedLossPercent.store(configuration.encoder.expectedLossPercent, ordering: .relaxed)
        listenerBudget = ListenerBudget(fullBitrate: configuration.encoder.bitrate)
        bitrate = configuration.encoder.bitrate
        counters.bitrate.store(configuration.encoder.bitrate, ordering: .relaxed)
        self.localTones = localTones
        self.source = source
        encoder = try OpusEncoder(configuration: configuration.encoder)
        lowDelayEncoder = configuration.adaptsCodec ? try OpusEncoder(configuration: configuration.encoder.lowDelay) : nil
        encoding = configuration.adaptiveCodec ? .robust : .fixed
        counters.codecMode.store(encoding, ordering: .relaxed)
        robustFrame.reserveCapacity(configuration.encoder.frameLength.samples)
        controls = CaptureControls(mode: configuration.mode, voxThreshold: configuration.preprocessor.vadStartProbability)
        self.linkFeedback = linkFeedback
        self.echoReference = echoReference
        echoAlignment = EchoAlignment(frameLength: configuration.period, tailMilliseconds: configuration.echoTailMilliseconds)
        var cleaning = configuration.preprocessor
        // Voice activity is always measured: the mode may change to VOX while the call runs.
        cleaning.voiceActivityDetection = true
        if !configuration.liveInput {
            cleaning.denoise = false
            cleaning.automaticGainControl = false
        }
        self.cleaning = cleaning
        cleaner = try MicrophoneCleaner(
            frameLength: configuration.period, settings: cleaning,
            echoModel: configuration.liveInput && configuration.echoCancellation ? configuration.echoModel : nil
        )
        self.stream = stream
        payloadType = configuration.isPage ? configuration.pagePayloadType : configuration.payloadType
        pagePayloadType = configuration.pagePayloadType
        self.pageFeed = pageFeed
        self.outbox = outbox
        self.counters = counters
        self.wakeNetwork = wakeNetwork
        frame = [Int16](repeating: 0, count: configuration.period.samples)
        preroll = PrerollLine(
            frames: Int(MediaTime.samples(nanoseconds: Int64(VoiceActivityGate.vox.prerollNanoseconds))) / configuration.period.samples,
            frameSamples: configuration.period.samples
        )
        echoFrame = [Int16](repeating: 0, count: configuration.period.samples)
        frameNanoseconds = configuration.period.nanoseconds
    }

    /// Captures, gates, encodes and queues frames until `stop` is set.
    func run(_ loop: LoopTurns) {
        while loop.next() {
            do {
                try captureOneFrame()
            } catch {
                counters.errors.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }

    private func captureOneFrame() throws {
        let hasAudio = try source.read(into: &frame)
        let captureTime = source.lastFrameCaptureTime?.nanoseconds
            ?? SystemClock.monotonicNanoseconds() - frameNanoseconds - source.delayNanoseconds
        if counters.firstSampleTime.load(ordering: .relaxed) == 0, let start = source.firstSampleTime {
            counters.firstSampleTime.store(start.nanosecondsSince1970, ordering: .relaxed)
        }
        if counters.firstFrameCaptureTime.load(ordering: .relaxed) == 0 {
            counters.firstFrameCaptureTime.store(captureTime, ordering: .relaxed)
        }
        if cleaner.cancelsEcho {
            echoReference.deliver(to: &echoAlignment)
            echoAlignment.reference(for: frame, capturedAt: captureTime, into: &echoFrame)
        }
        let speech = try cleaner.clean(&frame, reference: cleaner.cancelsEcho ? echoFrame : nil,
                                       echoDelaySamples: echoAlignment.echoDelaySamples)
        if cleaner.cancelsEcho {
            echoAlignment.echoPredicted(cleaner.echoPrediction, of: cleaner.echoPredictionMicrophone)
            counters.echoReferenceResyncs.store(echoAlignment.resyncs, ordering: .relaxed)
            counters.echoReferenceResyncsRefused.store(echoAlignment.refusedResyncs, ordering: .relaxed)
            counters.echoMovesRefused.store(echoAlignment.refusedEstimates, ordering: .relaxed)
            if echoAlignment.corrections != counters.echoDelayCorrections.load(ordering: .relaxed) {
                if let move = echoAlignment.lastMove { counters.recordEchoMove(move, number: echoAlignment.corrections - 1) }
                // After the move's slot: a reader that sees the count sees the move.
                counters.echoDelayCorrections.store(echoAlignment.corrections, ordering: .releasing)
            }
            counters.echoDelaySamples.store(echoAlignment.echoDelaySamples ?? CaptureStatistics.unknownEchoDelay, ordering: .relaxed)
        }
        let level = peakLevel(frame)
        counters.level.store(level, ordering: .relaxed)
        let now = SystemClock.monotonicNanoseconds()
        // A page goes out whatever the talk key, the voice or the mute say, and leaves the
        // microphone's gate, pre-roll and tones as they were (the canceller above still heard
        // the microphone, so it stays converged).
        sendingPage = pageFeed.next(into: &frame)
        let talking: Bool
        if sendingPage {
            talking = true
        } else {
            let gateOpen = hasAudio && !controls.muted.load(ordering: .relaxed) && shouldTransmit(speech: speech, now: now)
            if mode == .vox {
                preroll.pass(&frame, tag: 0, sending: gateOpen, pause: cleaner.voiceFrame.isPause)
            }
            if mode == .ptt { clickGuard.process(&frame, open: gateOpen) }
            if talkTones && mode != .open && gateOpen != gateWasOpen { announce(starting: gateOpen) }
            gateWasOpen = gateOpen
            // After the gate closes, the end tone still goes out.
            talking = gateOpen || !pendingTone.isEmpty
            if !pendingTone.isEmpty { mixPendingTone(silenceSpeech: !gateOpen) }
        }
        counters.talking.store(talking, ordering: .relaxed)

        adaptToReports(now: now)
        // The preprocessor's detector hears little without its denoiser (file input), and
        // misses the quiet ends of words: anything above -40 dBFS counts as voice too. (The
        // codec adapts only where no echo is cancelled, so no residual echo is taken for voice.)
        let voiced = sendingPage || speech || level > Int(Int16.max) / 100
        modes.heard(speech: voiced, now: now)
        defer { lastPeriodVoiced = voiced }
        guard let lowDelayEncoder else { return try frame.withUnsafeBufferPointer { try queue($0, from: encoder, talking: talking) } }
        let lowDelayWanted = modes.mode(now: now) == .lowDelay
        lowDelayWantedSince = lowDelayWanted ? lowDelayWantedSince ?? now : nil
        let handOver = encoding == .lowDelay || !lastPeriodVoiced || now >= (lowDelayWantedSince ?? now) + Self.handOverWait
        // A voice that starts while a robust frame is half gathered from silence does not wait
        // for it: that half goes out as a low-delay frame of its own and the voice follows at
        // once. (Waiting would code the whole first word robustly, 10 ms later and with the
        // robust encoder's lookahead, since the hand-over then waits for a pause.)
        if lowDelayWanted, handOver, robustFrame.count == frame.count, !robustFrameVoiced {
            use(.lowDelay)
            let talkingBefore = robustFrameTalking
            defer { clearRobustFrame() }
            try robustFrame.withUnsafeBufferPointer { try queue($0, from: lowDelayEncoder, talking: talkingBefore) }
        }
        if robustFrame.isEmpty, lowDelayWanted, handOver {
            use(.lowDelay)
            return try frame.withUnsafeBufferPointer { try queue($0, from: lowDelayEncoder, talking: talking) }
        }
        use(.robust)
        if talking {
            robustFrame.append(contentsOf: frame)
        } else {
            robustFrame.append(contentsOf: repeatElement(0, count: frame.count))
        }
        robustFrameTalking = robustFrameTalking || talking
        robustFrameVoiced = robustFrameVoiced || voiced
        guard robustFrame.count >= encoder.configuration.frameLength.samples else { return }
        defer { clearRobustFrame() }
        try robustFrame.withUnsafeBufferPointer { try queue($0, from: encoder, talking: robustFrameTalking) }
    }

    private func clearRobustFrame() {
        robustFrame.removeAll(keepingCapacity: true)
        robustFrameTalking = false
        robustFrameVoiced = false
    }

    /// The encoder taking over last coded audio from before the other one's turn: it starts
    /// afresh rather than predict from that.
    private func use(_ mode: CodecMode) {
        guard mode != encoding else { return }
        (mode == .lowDelay ? lowDelayEncoder : encoder)?.reset()
        encoding = mode
        counters.codecMode.store(mode, ordering: .relaxed)
    }

    /// Encodes `pcm` (when talking) and queues it as the stream's next frame.
    private func queue(_ pcm: UnsafeBufferPointer<Int16>, from encoder: OpusEncoder, talking: Bool) throws {
        var payload: ArraySlice<UInt8> = []
        if talking {
            if !lastFrameEncoded { encoder.reset() }
            payload = try encoder.encode(pcm)
        }
        lastFrameEncoded = talking
        // Opus marks frames that DTX judged silent with two bytes or less: not worth a packet.
        let send = talking && payload.count > 2
        guard let header = stream.nextFrame(samples: pcm.count, send: send, payloadBytes: payload.count) else { return }
        // A datagram the network thread is done with, filled again: no allocation per frame.
        var datagram = outbox.reusable() ?? []
        RTPPacket.serialize(
            marker: header.marker, payloadType: sendingPage ? pagePayloadType : payloadType, sequenceNumber: header.sequenceNumber,
            timestamp: header.timestamp, ssrc: stream.ssrc, payload: payload, into: &datagram
        )
        if outbox.push(datagram) {
            counters.sentPackets.store(Int(stream.packetCount), ordering: .relaxed)
            counters.sentOctets.store(Int(stream.octetCount), ordering: .relaxed)
            counters.lastTimestamp.store(Int(stream.lastTimestamp), ordering: .relaxed)
            wakeNetwork()
        } else {
            counters.outboxFull.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Sizes in-band FEC to the loss the peers report, tells the codec's mode how the link
    /// is, and sets the bitrate and frames for the listeners, when a new report came in.
    private func adaptToReports(now: UInt64) {
        guard let (feedback, count) = linkFeedback.latest(after: lastLossReport) else { return }
        lastLossReport = count
        let fraction = Double(feedback.lossPermille) / 1000
        let jitter = Double(feedback.jitterMicroseconds) / 1000
        modes.reported(fractionLost: fraction, jitterMilliseconds: jitter, now: now)
        modes.fewListeners = listenerBudget.allowsLowDelay(listeners: feedback.listeners)
        if let percent = lossAdaptation.reported(fractionLost: fraction) {
            try? encoder.setExpectedLoss(percent: percent)
            counters.expectedLossPercent.store(percent, ordering: .relaxed)
        }
        let shared = listenerBudget.bitrate(listeners: feedback.listeners)
        if shared != bitrate {
            // Within the bitrates Opus takes: the budget never goes above the one the encoders were made with.
            try? encoder.setBitrate(shared)
            try? lowDelayEncoder?.setBitrate(shared)
            bitrate = shared
            counters.bitrate.store(shared, ordering: .relaxed)
        }
    }

    /// Queues the start or end tone for the far end, and hands it to the playback thread
    /// for our own speaker.
    private func announce(starting: Bool) {
        let tone = starting ? TalkTones.start() : TalkTones.end()
        pendingTone = tone[...]
        localTones.push(tone)
    }

    private func mixPendingTone(silenceSpeech: Bool) {
        let count = min(frame.count, pendingTone.count)
        for i in 0..<frame.count {
            let speech = silenceSpeech ? 0 : float(fromInt16: frame[i])
            let tone = i < count ? pendingTone[pendingTone.startIndex + i] : 0
            frame[i] = int16(fromFloat: speech + tone)
        }
        pendingTone = pendingTone.dropFirst(count)
    }

    /// The talk mode in force; it may change while the call runs.
    private var mode: TalkMode { controls.mode.load(ordering: .relaxed) }

    private func shouldTransmit(speech: Bool, now: UInt64) -> Bool {
        let threshold = controls.voxThreshold.load(ordering: .relaxed)
        if threshold != cleaning.vadStartProbability {
            cleaning.vadStartProbability = threshold
            cleaning.vadContinueProbability = max(1, threshold - 15)
            try? cleaner.apply(cleaning)
        }
        switch mode {
        case .open: return true
        case .vox:
            return gate.isOpen(speech: speech, now: now, delayNanoseconds: UInt64(preroll.count) * frameNanoseconds)
        case .ptt:
            return controls.talkKeyHeld.load(ordering: .relaxed)
        }
    }

    private func peakLevel(_ frame: [Int16]) -> Int {
        frame.reduce(0) { max($0, abs(Int($1))) }
    }
}

/// What other threads tell the capture thread, which reads it every frame without locks:
/// the talk key, mute, the talk mode and the VOX threshold.
final class CaptureControls: Sendable {
    /// Set by the talk key or button (push-to-talk mode) and the mute key, from any thread.
    let talkKeyHeld = Atomic<Bool>(false)
    let muted = Atomic<Bool>(false)
    /// The talk mode and the VOX threshold, which the capture thread follows when they change.
    let mode: Atomic<TalkMode>
    let voxThreshold: Atomic<Int>

    init(mode: TalkMode, voxThreshold: Int) {
        self.mode = Atomic(mode)
        self.voxThreshold = Atomic(voxThreshold)
    }
}

/// The peers' reports of our stream, from the network thread to the encoder (the loop that
/// sizes FEC and chooses the codec's mode from what the far end measured).
final class LinkFeedbackChannel: Sendable {
    private let lossPermille = Atomic<Int>(0)
    private let jitterMicroseconds = Atomic<Int>(0)
    private let listeners = Atomic<Int>(0)
    private let posts = Atomic<Int>(0)

    /// Network thread: the worst link the peers report now (also when a peer left and took its report along).
    func post(_ feedback: LinkFeedback) {
        lossPermille.store(feedback.lossPermille, ordering: .relaxed)
        jitterMicroseconds.store(feedback.jitterMicroseconds, ordering: .relaxed)
        listeners.store(feedback.listeners, ordering: .relaxed)
        // Counted after the figures are stored: the reader takes them when it sees the count change.
        posts.wrappingAdd(1, ordering: .releasing)
    }

    /// Capture thread: the latest feedback if any was posted since the count `seen`, with the new count.
    func latest(after seen: Int) -> (feedback: LinkFeedback, count: Int)? {
        let count = posts.load(ordering: .acquiring)
        guard count != seen else { return nil }
        let feedback = LinkFeedback(
            lossPermille: lossPermille.load(ordering: .relaxed), jitterMicroseconds: jitterMicroseconds.load(ordering: .relaxed),
            listeners: listeners.load(ordering: .relaxed)
        )
        return (feedback, count)
    }
}

/// What the capture thread reports, readable from any thread without locks.
final class CaptureStatistics: Sendable {
    /// Packets lost because the outbox was full (the network thread fell behind).
    let outboxFull = Atomic<Int>(0)
    /// Frames lost to an error reading the source, cleaning, or encoding.
    let errors = Atomic<Int>(0)
    let talking = Atomic<Bool>(false)
    /// The encoder of the last frame.
    let codecMode = Atomic<CodecMode>(.fixed)
    /// The loss rate the encoder's FEC is sized for now.
    let expectedLossPercent = Atomic<Int>(0)
    /// The Opus bitrate now, in bits per second (`ListenerBudget`).
    let bitrate = Atomic<Int>(0)
    /// Times the echo reference re-synced with the devices (`EchoReferenceTimeline.resyncs`)
    /// and times it refused to while the canceller held (`refusedResyncs`),
    /// times it followed the echo (`EchoAlignment.corrections`), and the echo's delay behind
    /// it in samples (`unknownEchoDelay` until the signals find it).
    let echoReferenceResyncs = Atomic<Int>(0)
    let echoReferenceResyncsRefused = Atomic<Int>(0)
    let echoDelayCorrections = Atomic<Int>(0)
    /// The first `echoMoves.count` of those moves, in order: what explains a canceller's bad
    /// moment in a call's figures.
    let echoMoves: [EchoMoveSlot] = (0..<16).map { _ in EchoMoveSlot() }
    /// Moves the delay estimator called for that the canceller's prediction refuted.
    let echoMovesRefused = Atomic<Int>(0)
    static let unknownEchoDelay = Int.min
    let echoDelaySamples = Atomic<Int>(CaptureStatistics.unknownEchoDelay)
    /// Peak of the last frame, 0...32768.
    let level = Atomic<Int>(0)
    let firstSampleTime = Atomic<UInt64>(0)
    /// Monotonic nanoseconds of the first microphone frame's first sample, which the echo
    /// moves are timed from.
    let firstFrameCaptureTime = Atomic<UInt64>(0)
    /// Mirrors of the outgoing stream's RTCP sender counters.
    let sentPackets = Atomic<Int>(0)
    let sentOctets = Atomic<Int>(0)
    let lastTimestamp = Atomic<Int>(0)

    /// Capture thread: keeps the `number`-th move (from 0) if there is a slot for it.
    func recordEchoMove(_ move: EchoMove, number: Int) {
        guard echoMoves.indices.contains(number) else { return }
        echoMoves[number].capturedAt.store(move.capturedAt, ordering: .relaxed)
        echoMoves[number].samples.store(move.samples, ordering: .relaxed)
        echoMoves[number].finder.store(move.finder.rawValue, ordering: .relaxed)
    }

    /// The moves kept so far.
    func recordedEchoMoves() -> [EchoMove] {
        let count = min(echoMoves.count, echoDelayCorrections.load(ordering: .acquiring))
        return echoMoves.prefix(count).map { slot in
            EchoMove(
                capturedAt: slot.capturedAt.load(ordering: .relaxed), samples: slot.samples.load(ordering: .relaxed),
                finder: EchoMove.Finder(rawValue: slot.finder.load(ordering: .relaxed)) ?? .delayEstimator
            )
        }
    }
}

/// One `EchoMove`, written by the capture thread without locks.
final class EchoMoveSlot: Sendable {
    let capturedAt = Atomic<UInt64>(0)
    let samples = Atomic<Int>(0)
    let finder = Atomic<Int>(0)
}
