import ArgumentParser
import FoundationEssentials
import IntercomCall
import IntercomCore
import IntercomIO

/// `intercom sdp`: describes our stream so that ffmpeg, GStreamer or VLC can listen in.
struct SessionDescriptionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sdp",
        abstract: "Print an SDP describing what this peer sends, for other RTP tools.",
        discussion: """
            Start the listener with this SDP, then run intercom --unencrypted with --peer pointing \
            at the listener's address, e.g.:
              intercom sdp --to 127.0.0.1:5006 > call.sdp
              ffmpeg -protocol_whitelist file,udp,rtp -i call.sdp out.wav
              intercom --unencrypted --input-file speech.wav --peer 127.0.0.1:5006
            Calls are encrypted with keys only paired intercoms hold, which RTP tools cannot \
            take from an SDP: they hear only a call run with --unencrypted, which anyone on the \
            LAN can then hear too.
            """
    )

    @Option(help: ArgumentHelp("Where the listening tool receives the stream.", valueName: "HOST:PORT"))
    var to: String = "127.0.0.1:5006"

    @OptionGroup(title: "Audio") var audio: AudioOptions

    func run() throws {
        let listener: SocketAddress
        do {
            listener = try SocketAddress.parse(to, label: "--to")
        } catch {
            throw ValidationError("\(error)")
        }
        var call = CallConfiguration()
        try audio.apply(to: &call)
        let encoder = call.encoder
        // Frames as short as the device period: 5 ms where the codec adapts, else the encoder's.
        let frameMilliseconds = Double(MediaTime.milliseconds(frames: call.period.samples, rate: VoiceFormat.sampleRate))
        var generator = SystemRandomNumberGenerator()
        let description = SessionDescription(
            address: listener.host, port: listener.port, payloadType: 96,
            frameMilliseconds: frameMilliseconds, shortestFrameMilliseconds: frameMilliseconds,
            bitsPerSecond: encoder.bitrate,
            usesDiscontinuousTransmission: encoder.discontinuousTransmission,
            sessionID: UInt64.random(in: 1...UInt64(UInt32.max), using: &generator)
        )
        print(description.text, terminator: "")
        StandardStream.error.write("intercom: the stream this describes is plain RTP: run the call with --unencrypted (anyone on the LAN can then listen)\n")
    }
}
