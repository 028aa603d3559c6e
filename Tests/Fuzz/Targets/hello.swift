// The hello's body on its own.
import IntercomCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? PeerHello(data: Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
