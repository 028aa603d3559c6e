// TXT records of services found by mDNS, given as DNS-SD's wire form (a length, then the bytes).
// Built together with Sources/IntercomIO/Discovery/TXTRecord.swift, which needs nothing else.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var entries: [[UInt8]] = []
    var index = 0
    while index < size {
        let length = Int(bytes[index])
        let end = min(size, index + 1 + length)
        entries.append(Array(bytes[(index + 1)..<end]))
        index = end
    }
    let pairs = TXTRecord.decode(entries)
    precondition(pairs.count <= entries.count)
    return 0
}
