import IntercomCore

/// Where the microphone's audio comes from: a sound card, a file, or nothing.
///
/// Frames are 48 kHz mono 16-bit PCM of the size given when the source was opened.
/// `read` blocks like a sound card does: until the next frame has been captured.
public protocol AudioSource: AnyObject {
    /// Fills `frame` with the next frame; returns false once the source has nothing more
    /// to say (the frame is then silence, still paced in real time).
    func read(into frame: inout [Int16]) throws(AudioEndpointError) -> Bool
    /// When the first sample was captured, once known.
    var firstSampleTime: WallClockTime? { get }
    /// Audio captured after the frame just read and still waiting in the device, in
    /// nanoseconds: the frame began that much (plus its own length) before `read` returned.
    var delayNanoseconds: UInt64 { get }
    /// When the first sample of the frame just read was captured, where the source knows it
    /// exactly (a clocked file); nil to derive it from the delay.
    var lastFrameCaptureTime: MonotonicInstant? { get }
}

extension AudioSource {
    public var lastFrameCaptureTime: MonotonicInstant? { nil }
}

/// Where received audio goes: a sound card, a file, or nowhere.
///
/// `write` blocks like a sound card does: until the device has room for the frame.
public protocol AudioSink: AnyObject {
    func write(_ frame: [Float]) throws(AudioEndpointError)
    /// When the first sample was played, once known.
    var firstSampleTime: WallClockTime? { get }
    /// How long from now until a frame written next starts to be heard, in nanoseconds.
    var delayNanoseconds: UInt64 { get }
    /// When a frame written next starts to be heard, where the sink knows it exactly (a
    /// clocked file, even when the writer runs late); nil to derive it from the delay.
    var nextFramePlayTime: MonotonicInstant? { get }
    /// Finishes the output (a file's header is completed); further writes are ignored.
    func close()
}

extension AudioSink {
    public var nextFramePlayTime: MonotonicInstant? { nil }
}

/// A failure of an audio endpoint, naming the file or device concerned.
public struct AudioEndpointError: Error, Equatable, CustomStringConvertible {
    public let endpoint: String
    public let reason: String

    public init(endpoint: String, reason: String) {
        self.endpoint = endpoint
        self.reason = reason
    }

    public var description: String { "\(endpoint): \(reason)" }
}
