import CSpeexDSP

/// A failure of a SpeexDSP component, with the library's own description where it has one.
public enum SpeexError: Error, Equatable, CustomStringConvertible {
    /// The resampler returned an error code.
    case resampler(code: Int32, message: String)
    /// A component could not be created (SpeexDSP returns NULL without a reason).
    case creationFailed(component: String)
    /// A frame whose length is not the configured frame size.
    case invalidFrameSize(got: Int, expected: Int)
    /// A setting outside what the component accepts.
    case invalidSetting(name: String, value: Double)

    init(resamplerCode code: Int32) {
        self = .resampler(code: code, message: String(cString: speex_resampler_strerror(code)))
    }

    public var description: String {
        switch self {
        case .resampler(let code, let message): "speexdsp resampler: \(message) (\(code))"
        case .creationFailed(let component): "speexdsp: could not create the \(component)"
        case .invalidFrameSize(let got, let expected): "speexdsp: frame of \(got) samples, expected \(expected)"
        case .invalidSetting(let name, let value): "speexdsp: invalid \(name) \(value)"
        }
    }
}
