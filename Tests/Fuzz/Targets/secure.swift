// An encrypted call's datagrams from a stranger: framing, handshake messages, sealed packets.
import IntercomSecurity

nonisolated(unsafe) var channel = SecureChannel<Int>(
    configuration: .init(staticPrivateKey: SecretBytes(copying: [UInt8](repeating: 7, count: 32))), isTrusted: { _ in true })
nonisolated(unsafe) var now: UInt64 = 1_000_000_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    now += 1_000_000
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if case .plaintext = channel.receive(bytes[...], from: size % 4, now: now) { preconditionFailure("a stranger's bytes opened") }
    _ = channel.maintain(wanted: [size % 4], now: now)
    return 0
}
