// Rewrites the trusted list of the state directory it is given, over and over, and prints each
// version's number once `TrustedDeviceStore` has written it. The power-cut test kills it at
// random moments and checks that the list is then always the last version printed or the next
// one, whole: never part of either.
import Foundation
import IntercomIO

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: StateWriter STATE-DIRECTORY\n".utf8))
    exit(64)
}
let directory = StateDirectory(path: CommandLine.arguments[1])
do {
    _ = try DeviceIdentity.loadOrCreate(in: directory)
    let store = TrustedDeviceStore(directory: directory)
    // Long names make each version tens of kilobytes, written in several system calls.
    let padding = String(repeating: "x", count: 4_000)
    let keys = (1...8).map { [UInt8](repeating: UInt8($0), count: 32) }
    var version = try store.load().compactMap { Int($0.name.prefix { $0 != " " }) }.max() ?? 0
    while true {
        version += 1
        try store.add(TrustedDevice(name: "\(version) \(padding)", publicKey: keys[version % keys.count], pairedAt: Date()))
        FileHandle.standardOutput.write(Data("\(version)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("StateWriter: \(error)\n".utf8))
    exit(1)
}
