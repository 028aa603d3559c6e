/// A request on a running intercom's status socket: one line a local client sent. Read with
/// bounds from raw bytes, since the socket's group may hold more users than the daemon's own.
public enum StatusRequest: Equatable, Sendable {
    /// The call's figures, as JSON (`status`, or `status json` as older clients ask).
    case status
    /// Pair the daemon's identity: with a code the other device printed, or making one.
    case pair(code: String?)
    /// How the pairing asked for last is going.
    case pairResult
    /// Stop trusting a paired device of the daemon's, by its name or fingerprint.
    case unpair(device: String)
    /// How loud a paired device of the daemon's plays there, remembered (`PeerListening`).
    case volume(device: String, percent: Int)
    case mute(device: String)
    case unmute(device: String)
    /// Play the recording passed beside the request (an open file) as a page from the
    /// daemon's identity, to `target` (nil: the daemon's own target).
    case page(target: CallTarget?)
    /// How the page asked for last is going.
    case pageResult

    /// The longest device name or fingerprint an `unpair` request may give, in bytes.
    public static let maximumDeviceBytes = 128

    /// The longest request line accepted, in bytes.
    public static let maximumBytes = 256

    /// The request in the bytes a client sent, up to its first line break.
    public static func parse(_ bytes: some Collection<UInt8>) -> Result<StatusRequest, StatusRequestError> {
        let line = bytes.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        guard line.count <= maximumBytes else { return .failure(.tooLong) }
        guard let text = String(validating: line, as: UTF8.self) else { return .failure(.notText) }
        let words = text.split(separator: " ")
        switch (words.first, words.count) {
        case ("status", 1):
            return .success(.status)
        case ("status", 2) where words[1] == "json":
            return .success(.status)
        case ("pair", 1):
            return .success(.pair(code: nil))
        case ("pair", 2) where words[1] == "result":
            return .success(.pairResult)
        case ("pair", 2):
            let code = words[1]
            guard code.utf8.count == 6, code.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return .failure(.badCode)
            }
            return .success(.pair(code: String(code)))
        case ("pair", _):
            return .failure(.badCode)
        case ("unpair", 2...):
            return device(after: 1, in: text).map { StatusRequest.unpair(device: $0) }
        case ("mute", 2...):
            return device(after: 1, in: text).map { StatusRequest.mute(device: $0) }
        case ("unmute", 2...):
            return device(after: 1, in: text).map { StatusRequest.unmute(device: $0) }
        case ("volume", 3...):
            guard words[1].utf8.count <= 3, let percent = Int(words[1]), PeerListening.volumeRange.contains(percent) else {
                return .failure(.badVolume)
            }
            return device(after: 2, in: text).map { StatusRequest.volume(device: $0, percent: percent) }
        case ("page", 1):
            return .success(.page(target: nil))
        case ("page", 2) where words[1] == "result":
            return .success(.pageResult)
        case ("page", 3...) where words[1] == "to":
            return device(after: 2, in: text).flatMap { text in
                do throws(CallTargetError) {
                    return .success(StatusRequest.page(target: try CallTarget(parsing: text)))
                } catch {
                    return .failure(.badTarget)
                }
            }
        case ("page", _):
            return .failure(.badTarget)
        case ("unpair", _), ("mute", _), ("unmute", _):
            return .failure(.badDevice)
        case ("volume", _):
            return .failure(.badVolume)
        default:
            return .failure(.unknown(TerminalText.sanitized(text.prefix(40))))
        }
    }

    /// The rest of the line after its first `words` words: a device's name may hold spaces.
    private static func device(after words: Int, in text: String) -> Result<String, StatusRequestError> {
        var rest = text[...]
        for _ in 0..<words {
            rest = rest.drop { $0 == " " }
            rest = rest.drop { $0 != " " }
        }
        var device = rest.drop { $0 == " " }
        while device.last == " " { device = device.dropLast() }
        guard !device.isEmpty, device.utf8.count <= maximumDeviceBytes,
              !device.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else { return .failure(.badDevice) }
        return .success(String(device))
    }

    /// Whether it only reads (anyone the socket lets in may ask), rather than acts for the daemon.
    public var isReadOnly: Bool { self == .status }

    /// The line that asks for it.
    public var line: String {
        switch self {
        case .status: "status"
        case .pair(let code): code.map { "pair \($0)" } ?? "pair"
        case .pairResult: "pair result"
        case .unpair(let device): "unpair \(device)"
        case .volume(let device, let percent): "volume \(percent) \(device)"
        case .mute(let device): "mute \(device)"
        case .unmute(let device): "unmute \(device)"
        case .page(let target): target.map { "page to \($0)" } ?? "page"
        case .pageResult: "page result"
        }
    }
}

/// Why a status request is refused; its description is the reply line.
public enum StatusRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLong
    case notText
    /// Not a request we know: what was asked, cut short and made safe to print.
    case unknown(String)
    case badCode
    case badDevice
    case badVolume
    case badTarget

    public var description: String { "error: \(reason)" }

    /// Why, as a `StatusReply.refused` says it.
    public var reason: String {
        switch self {
        case .tooLong: "request too long"
        case .notText: "request is not UTF-8 text"
        case .unknown(let request): "unknown request '\(request)'; try 'status'"
        case .badCode: "pair takes at most a code, and a code is six digits"
        case .badDevice: "a device is named by its name or fingerprint (at most \(StatusRequest.maximumDeviceBytes) bytes, printable)"
        case .badTarget: "page takes 'to' and a target ('all', 'room:NAME', or a device's name or fingerprint), or 'result'"
        case .badVolume: "volume takes a percentage from \(PeerListening.volumeRange.lowerBound) to \(PeerListening.volumeRange.upperBound), then a device's name or fingerprint"
        }
    }
}
