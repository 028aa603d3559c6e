// Requests on the status socket, from any member of its group.
import IntercomCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    switch StatusRequest.parse(bytes) {
    case .success(let request):
        // What was understood is what its own line says.
        precondition(StatusRequest.parse(Array(request.line.utf8)) == .success(request))
    case .failure(let error):
        let reply = error.description
        precondition(reply.utf8.count < 200 && !reply.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }
    return 0
}
