// RTCP compound packets (SR, RR, SDES, BYE, APP), and the hello inside APP.
import IntercomCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let packets = try? RTCPPacket.parseCompound(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    for case .application(let application) in packets {
        _ = try? PeerHello(application)
    }
    return 0
}
