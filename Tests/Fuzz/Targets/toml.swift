// Configuration files (TOML), which an administrator may have copied from anywhere.
import IntercomCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    func printable(_ line: String) -> Bool { !line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } }
    do {
        // Every value reads back the same from what `intercom config` would write for it.
        for entry in try ConfigurationText.parse(text) {
            let written = "v = \(ConfigurationText.literal(entry.value))\n"
            let reread = try ConfigurationText.parse(written).first?.value
            precondition(reread == entry.value || entry.value.hasNaN, "\(entry.value) came back as \(String(describing: reread))")
        }
    } catch {
        precondition(printable(error.description))
    }
    do {
        let file = try ConfigurationFile.parse(text, path: "config.toml")
        precondition(file.warnings.allSatisfy(printable))
        // Every value kept is one its setting takes.
        for entry in file.entries { precondition(entry.setting.accepts(entry.value)) }
    } catch {
        precondition(printable(error.description))
    }
    return 0
}

extension ConfigurationText.Value {
    /// NaN is never equal to itself.
    var hasNaN: Bool {
        switch self {
        case .float(let number): number.isNaN
        case .array(let items): items.contains { $0.hasNaN }
        default: false
        }
    }
}
