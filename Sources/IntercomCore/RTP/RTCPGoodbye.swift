/// An RTCP BYE packet (RFC 3550 §6.6): the sources are leaving, optionally saying why.
public struct RTCPGoodbye: Equatable, Sendable {
    /// At most 31.
    public var sources: [UInt32]
    /// UTF-8, cut to 255 bytes on the wire.
    public var reason: String?

    public init(sources: [UInt32], reason: String? = nil) {
        self.sources = sources
        self.reason = reason
    }

    init(sources: RTCPSourceList, reason: ArraySlice<UInt8>?) {
        self.init(sources: Array(sources), reason: reason.map { String(decoding: $0, as: UTF8.self) })
    }

    func appendBody(to bytes: inout [UInt8]) {
        for source in sources { bytes.appendBigEndian(source) }
        if let reason {
            let text = reason.utf8Prefix(maximumByteCount: 255)
            bytes.append(UInt8(text.count))
            bytes += text
        }
    }
}
