import IntercomCore
import IntercomDSP
import IntercomIO

/// Everything a peer needs to join a call.
public struct CallConfiguration: Sendable {
    /// The UDP port to listen on; 0 picks a free one.
    public var port: Int = 5004
    /// Peers named by the user, called without discovery.
    public var staticPeers: [SocketAddress] = []
    /// The name other peers see.
    public var name: String = defaultPeerName()
    /// A random identity, stable for the life of the process.
    public var peerID: PeerID = {
        var generator = SystemRandomNumberGenerator()
        return PeerID.random(using: &generator)
    }()
    public var mode: TalkMode = .open
    public var encoder = OpusEncoderConfiguration()
    /// The RTP payload type of our Opus stream (dynamic range, RFC 3551).
    public var payloadType: UInt8 = 96
    /// The preprocessor's settings; VOX uses its voice activity detector.
    public var preprocessor = PreprocessorConfiguration()
    /// How often RTCP reports and hellos go to each peer.
    public var reportIntervalNanoseconds: UInt64 = 1_000_000_000
    /// A learned peer silent for this long has left.
    public var keepaliveTimeoutNanoseconds: UInt64 = 5_000_000_000
    /// The jitter buffer's bound on the delay it may add.
    public var maximumJitterDelayNanoseconds: UInt64 = 200_000_000

    public init() {}

    public var frameSamples: Int { encoder.frameSamples }
}
