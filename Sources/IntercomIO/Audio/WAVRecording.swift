import Glibc
import IntercomCore
import IntercomDSP

/// A whole WAV recording read at once, for what runs faster than real time (the paced file
/// source is the sound card's stand-in).
public enum WAVRecording {
    /// The recording at 48 kHz mono (channels mixed, other rates converted), as 16-bit samples,
    /// read and converted a block at a time (`WAVReader`).
    public static func read(path: String) throws(AudioEndpointError) -> [Int16] {
        try WAVReader(path: path).readAll()
    }

    /// The recording in the open file `descriptor`, `size` bytes long (read from where the
    /// file stands; the descriptor stays open), refused before it is converted if it lasts
    /// longer than `maximumSeconds`.
    public static func read(descriptor: Int32, size: Int, maximumSeconds: Int) throws(AudioEndpointError) -> [Int16] {
        var bytes = [UInt8](repeating: 0, count: size)
        var count = 0
        while count < size {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.address(at: count), size - count) }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { break }
            count += read
        }
        return try decode(Array(bytes.prefix(count)), endpoint: "the recording", maximumSeconds: maximumSeconds)
    }

    private static func decode(_ bytes: [UInt8], endpoint path: String, maximumSeconds: Int? = nil) throws(AudioEndpointError) -> [Int16] {
        let audio: WAVCodec.Audio
        do {
            audio = try WAVCodec.decode(bytes)
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "not a readable WAV file (\(error))")
        }
        guard audio.frameCount > 0 else { throw AudioEndpointError(endpoint: path, reason: "the WAV file holds no audio") }
        if let maximumSeconds, audio.frameCount > maximumSeconds * audio.sampleRate {
            throw AudioEndpointError(endpoint: path, reason: "it lasts \(audio.frameCount / max(1, audio.sampleRate)) s, longer than \(maximumSeconds) s")
        }
        var mono = audio.mixedToMono()
        if audio.sampleRate != VoiceFormat.sampleRate {
            do {
                mono = try Resampler(inputRate: audio.sampleRate, outputRate: VoiceFormat.sampleRate).process(mono)
            } catch {
                throw AudioEndpointError(endpoint: path, reason: "cannot convert \(audio.sampleRate) Hz: \(error)")
            }
        }
        return mono.map(int16(fromFloat:))
    }
}
