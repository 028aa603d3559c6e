// WAV files given as --input-file.
import IntercomCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? WAVCodec.decode(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
