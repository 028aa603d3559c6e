// What lies behind the tag check: the fuzz bytes are sealed by a real session, opened by its
// peer, and handed to the RTP/RTCP parsers as an authenticated packet would be.
import IntercomCore
import IntercomSecurity

struct Session {
    var a: SecureChannel<Int>
    var b: SecureChannel<Int>

    init() {
        let aKey = SecretBytes(copying: [UInt8](repeating: 1, count: 32)), bKey = SecretBytes(copying: [UInt8](repeating: 2, count: 32))
        a = SecureChannel(configuration: .init(staticPrivateKey: aKey), isTrusted: { _ in true })
        b = SecureChannel(configuration: .init(staticPrivateKey: bKey), isTrusted: { _ in true })
        var queue = a.maintain(wanted: [2], now: 1).map { ($0.bytes, 2) }
        while !queue.isEmpty {
            let (bytes, to) = queue.removeFirst()
            let result = to == 2 ? b.receive(bytes[...], from: 1, now: 1) : a.receive(bytes[...], from: 2, now: 1)
            if case .handshake(let reply?) = result { queue.append((reply, to == 2 ? 1 : 2)) }
        }
    }
}

nonisolated(unsafe) var session = Session()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let kind: SecureDatagram.TransportKind = size % 2 == 0 ? .rtp : .rtcp
    guard let sealed = session.a.seal(bytes, kind: kind, to: 2) else { preconditionFailure("no session") }
    guard case .plaintext(_, let opened, _) = session.b.receive(sealed[...], from: 1, now: 2) else { preconditionFailure("did not open") }
    precondition(opened == bytes)
    _ = try? Datagram.classify(opened)
    return 0
}
