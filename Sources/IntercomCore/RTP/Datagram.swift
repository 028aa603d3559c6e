/// A datagram received on a port that carries both RTP and RTCP (RFC 5761 rtcp-mux).
public enum Datagram: Equatable, Sendable {
    case rtp(RTPPacket)
    case rtcp([RTCPPacket])

    /// Tells RTP from RTCP and parses accordingly.
    ///
    /// RFC 5761 §4: with the marker bit masked off, RTCP packet types 192–223 fall in 64–95,
    /// a range RTP payload types must avoid when multiplexed.
    public static func classify(_ bytes: some Collection<UInt8>) throws(DatagramParseError) -> Datagram {
        let bytes = Array(bytes)
        guard bytes.count >= 2 else { throw .tooShort(byteCount: bytes.count) }
        if !isRTP(bytes[...]) {
            do {
                return .rtcp(try RTCPPacket.parseCompound(bytes))
            } catch {
                throw .rtcp(error)
            }
        }
        do {
            return .rtp(try RTPPacket.parse(bytes))
        } catch {
            throw .rtp(error)
        }
    }
}

extension Datagram {
    /// Whether `classify` would read the datagram as RTP (at least two bytes, and a second
    /// byte outside RTCP's range).
    public static func isRTP(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.count >= 2 && !(64...95).contains(bytes[bytes.startIndex + 1] & 0x7F)
    }
}

/// Why a multiplexed datagram could not be parsed.
public enum DatagramParseError: Error, Equatable, Sendable {
    /// Too short to tell RTP from RTCP.
    case tooShort(byteCount: Int)
    case rtp(RTPParseError)
    case rtcp(RTCPParseError)
}
