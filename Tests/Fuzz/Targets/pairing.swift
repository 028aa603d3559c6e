// Pairing messages from a stranger, to a waiting device and to one that is joining.
import IntercomSecurity

nonisolated(unsafe) var responder = PairingResponder(code: "482913", staticKey: [UInt8](repeating: 9, count: 32), name: "door", deadline: .max)
nonisolated(unsafe) var initiator = PairingInitiator(code: "482913", staticKey: [UInt8](repeating: 8, count: 32), name: "laptop")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = PairingMessage(bytes[...]).map { $0.serialized() }
    if case .paired = responder.receive(bytes[...], now: 1) { preconditionFailure("a stranger paired") }
    if responder.isExhausted {
        responder = PairingResponder(code: "482913", staticKey: [UInt8](repeating: 9, count: 32), name: "door", deadline: .max)
    }
    _ = initiator.receive(bytes[...])
    return 0
}
