/// The SDP (RFC 4566) describing the Opus stream a peer sends (RFC 7587).
///
/// Informational: peers do not negotiate, but the text lets other RTP tools receive our stream.
public struct SessionDescription: Equatable, Sendable {
    /// The numeric address the stream is sent from; an address containing ':' is IPv6.
    public var address: String
    public var port: UInt16
    /// A dynamic payload type (96–127).
    public var payloadType: UInt8
    /// Audio per packet in milliseconds (2.5, 5, 10, 20, 40 or 60 for Opus): the usual one
    /// (`ptime`), and the shortest the sender may send (`minptime`).
    public var frameMilliseconds: Double
    public var shortestFrameMilliseconds: Double
    public var bitsPerSecond: Int
    public var usesDiscontinuousTransmission: Bool
    /// The `o=` session id; RFC 4566 suggests an NTP timestamp, so the caller passes one in.
    public var sessionID: UInt64

    public init(
        address: String, port: UInt16, payloadType: UInt8 = 96, frameMilliseconds: Double, shortestFrameMilliseconds: Double? = nil,
        bitsPerSecond: Int, usesDiscontinuousTransmission: Bool, sessionID: UInt64
    ) {
        self.address = address
        self.port = port
        self.payloadType = payloadType
        self.frameMilliseconds = frameMilliseconds
        self.shortestFrameMilliseconds = shortestFrameMilliseconds ?? frameMilliseconds
        self.bitsPerSecond = bitsPerSecond
        self.usesDiscontinuousTransmission = usesDiscontinuousTransmission
        self.sessionID = sessionID
    }

    /// The SDP text, CRLF line ends, ending with one.
    public var text: String {
        let addressType = address.contains(":") ? "IP6" : "IP4"
        let pt = payloadType
        let lines = [
            "v=0",
            "o=- \(sessionID) 1 IN \(addressType) \(address)",
            "s=intercom",
            "c=IN \(addressType) \(address)",
            "t=0 0",
            "m=audio \(port) RTP/AVP \(pt)",
            // RFC 7587: always 48 kHz and 2 channels in rtpmap, mono or not.
            "a=rtpmap:\(pt) opus/48000/2",
            "a=fmtp:\(pt) minptime=\(Self.format(milliseconds: shortestFrameMilliseconds));useinbandfec=1;usedtx=\(usesDiscontinuousTransmission ? 1 : 0)"
                + ";stereo=0;sprop-stereo=0;maxaveragebitrate=\(bitsPerSecond)",
            "a=ptime:\(Self.format(milliseconds: frameMilliseconds))",
            "a=rtcp-mux",
            "a=sendonly",
        ]
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// "20" for whole milliseconds, "2.5" otherwise.
    private static func format(milliseconds: Double) -> String {
        milliseconds == milliseconds.rounded() && abs(milliseconds) < 1e9
            ? String(Int(milliseconds)) : String(milliseconds)
    }
}
