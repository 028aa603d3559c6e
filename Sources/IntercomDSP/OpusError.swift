import COpus

/// A failure of the Opus codec, with libopus's own description where it produced one.
public enum OpusError: Error, Equatable, CustomStringConvertible {
    /// libopus returned an error code.
    case library(code: Int32, message: String)
    /// A PCM frame whose length is not the configured frame size.
    case invalidFrameSize(got: Int, expected: Int)
    /// A setting outside what Opus accepts.
    case invalidSetting(name: String, value: Int, allowed: ClosedRange<Int>)
    /// A packet with no bytes: nothing to decode (a lost packet is concealed, not decoded).
    case emptyPacket

    init(code: Int32) {
        self = .library(code: code, message: String(cString: opus_strerror(code)))
    }

    public var description: String {
        switch self {
        case .library(let code, let message): "opus: \(message) (\(code))"
        case .invalidFrameSize(let got, let expected): "opus: frame of \(got) samples, expected \(expected)"
        case .invalidSetting(let name, let value, let allowed):
            "opus: \(name) \(value) is outside \(allowed.lowerBound)...\(allowed.upperBound)"
        case .emptyPacket: "opus: empty packet"
        }
    }
}

/// Runs a libopus call that returns a negative code on failure.
@discardableResult
func checkOpus(_ result: Int32) throws(OpusError) -> Int32 {
    guard result >= 0 else { throw OpusError(code: result) }
    return result
}
