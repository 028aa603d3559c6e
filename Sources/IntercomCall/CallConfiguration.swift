import IntercomCore
import IntercomDSP
import IntercomIO

/// Everything a peer needs to join a call.
public struct CallConfiguration: Sendable {
    /// The UDP port to listen on; 0 picks a free one.
    public var port: Int = 5004
    /// The one local address to listen on (its port is ignored: `port` says it); nil: every address.
    public var bindAddress: SocketAddress?
    /// Peers named by the user, called without discovery.
    public var staticPeers: [SocketAddress] = []
    /// The name other peers see.
    public var name: String = defaultPeerName()
    /// The rooms this device belongs to, told to its peers in every hello.
    public var rooms: [GroupName] = []
    /// Whom this device talks to at the start (`Call.setTarget` changes it).
    public var target: CallTarget = .all
    /// A random identity, stable for the life of the process.
    public var peerID: PeerID = {
        var generator = SystemRandomNumberGenerator()
        return PeerID.random(using: &generator)
    }()
    public var mode: TalkMode = .open
    /// Short tones at both ends when a transmission starts and ends (push-to-talk and VOX).
    public var talkTones = false
    /// The robust encoder's settings (or the only encoder's, when `adaptiveCodec` is off);
    /// the low-delay encoder takes `encoder.lowDelay`.
    public var encoder = OpusEncoderConfiguration()
    /// Switch between the low-delay and the robust encoder as the link and the voice allow
    /// (`CodecModeController`); off when the user fixed the frame length.
    public var adaptiveCodec = true
    /// The RTP payload type of our Opus stream (dynamic range, RFC 3551).
    public var payloadType: UInt8 = 96
    /// The same Opus stream sent as a page (`intercom page`): the next dynamic payload type,
    /// so that every packet says it is one and a receiver ducks the others from the first.
    public var pagePayloadType: UInt8 { payloadType &+ 1 }
    /// This call sends a page: a chime or a message, played over everything else.
    public var isPage = false
    /// Pages are not played here (`--no-pages`).
    public var refusesPages = false
    /// How much quieter the other streams play while a page plays.
    public var pageDuckingDecibels = 15
    /// Cancel the echo of our speaker in our microphone (live audio only).
    public var echoCancellation = true
    /// The longest echo path the canceller models: device buffers plus room reverberation.
    public var echoTailMilliseconds = EchoCanceller.Model.standard.tailMilliseconds
    /// Cancel the echo of a loudspeaker that distorts too (`EchoCanceller`).
    public var echoCancelsDistortion = EchoCanceller.Model.standard.cancelsDistortion
    var echoModel: EchoCanceller.Model {
        EchoCanceller.Model(tailMilliseconds: echoTailMilliseconds, cancelsDistortion: echoCancelsDistortion)
    }
    /// The sound-card period asked for when the loops' period is longer: 5 ms by default (see
    /// `devicePeriod`); the Pi profile's 10 ms halves the device threads' wake-ups.
    public var longestDevicePeriod = AudioProfile.standard.longestDevicePeriod
    /// Denoise, AGC and residual-echo suppression settings for live audio; VOX uses its
    /// voice activity detector in any case.
    public var preprocessor = PreprocessorConfiguration()
    /// Whether the microphone is live (a sound card) rather than a file. A file is sent as
    /// it is: there is no echo to cancel and no room noise to remove.
    public var liveInput = false
    /// How often RTCP reports and hellos go to each peer.
    public var reportInterval: Duration = .seconds(1)
    /// A learned peer silent for this long has left.
    public var keepaliveTimeout: Duration = .seconds(5)
    /// The jitter buffer's bound on the delay it may add.
    public var maximumJitterDelay: Duration = .milliseconds(200)
    /// Encrypt and authenticate everything with trusted devices; nil speaks plain RTP (interop).
    public var security: CallSecurity?
    /// For the watchdog's test only: one real-time thread ("capture", "playback" or "network")
    /// stops turning its loop this long after the call is set up.
    public var stallForTesting: (thread: String, after: Duration)?

    public init() {}

    /// Whether the codec adapts in this call: asked for, on a live microphone, with or without
    /// echo cancelling. (With it, 5 ms loop periods once cancelled less, and less steadily, on
    /// the loaded lab machine; since the echo reference waits before it re-syncs and the sound
    /// cards run 5 ms periods in every call, the lab echo test under the whole suite's load
    /// cancels 35-37 dB with the talker on the other side heard intact: Docs/reliability.md.)
    /// File input keeps 10 ms frames: under a fully loaded test run, spurts after silence came
    /// out with the delay moving inside their first second (the hand-over to low delay), which
    /// the end-to-end checks of file calls could not judge.
    public var adaptsCodec: Bool { adaptiveCodec && liveInput }

    /// One turn of the capture and playback loops: the low-delay frame (5 ms) when the codec
    /// adapts, otherwise the encoder's frame.
    public var period: FrameLength { adaptsCodec ? encoder.lowDelay.frameLength : encoder.frameLength }

    /// The sound-card period to ask for: the low-delay frame (5 ms) whatever the loops'
    /// period, since a speaker kept full holds its whole buffer and devices round the buffer up
    /// to whole periods (ALSA's pulse plugin to at least three: 30 ms with 10 ms periods, where
    /// 20 ms were asked for). A loop's period of 10 or 20 ms then takes two or four. A longer
    /// `longestDevicePeriod` (the Pi profile) is used where the loops' period holds it whole.
    public var devicePeriod: FrameLength {
        period.samples % longestDevicePeriod.samples == 0 ? longestDevicePeriod : encoder.lowDelay.frameLength
    }
}
