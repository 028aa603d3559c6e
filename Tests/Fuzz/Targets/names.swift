// Remote strings on their way to a terminal, and network profiles typed by a user.
import IntercomCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let shown = TerminalText.sanitized(bytes: bytes)
    precondition(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) })
    _ = try? ImpairmentProfile.parse(String(decoding: bytes, as: UTF8.self))
    return 0
}
