import CALSA

/// A failed ALSA call: which function, and alsa-lib's own words for the error (`snd_strerror`).
public struct ALSAError: Error, Equatable, CustomStringConvertible {
    /// The alsa-lib function that failed, such as `snd_pcm_open`.
    public let function: String
    /// The negative error number it returned.
    public let code: Int32
    public let message: String

    public init(function: String, code: Int32) {
        self.init(function: function, code: code, message: String(cString: snd_strerror(code)))
    }

    /// For failures alsa-lib has no words for, such as a device that offers no usable format.
    init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(function): \(message)" }
}

/// Throws an `ALSAError` for a negative result of `function`; passes other results through.
@discardableResult
func checkALSA(_ result: Int32, _ function: String) throws(ALSAError) -> Int32 {
    guard result >= 0 else { throw ALSAError(function: function, code: result) }
    return result
}
