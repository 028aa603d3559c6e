// RTP and RTCP as they arrive in a plain call: the datagram classifier and every parser behind it.
import IntercomCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? Datagram.classify(UnsafeBufferPointer(start: data, count: size))
    return 0
}
