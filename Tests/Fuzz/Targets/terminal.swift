// Terminal input: keys, escape sequences, the kitty keyboard protocol, bracketed paste.
import IntercomCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var parser = TerminalInputParser()
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // Fed in two pieces, as reads may split a sequence anywhere.
    let middle = size / 2
    _ = parser.feed(bytes[0..<middle])
    _ = parser.feed(bytes[middle...])
    _ = parser.flushLoneEscape()
    return 0
}
