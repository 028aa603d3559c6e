import IntercomCore
import IntercomDSP

/// A whole WAV recording read at once, for what runs faster than real time (the paced file
/// source is the sound card's stand-in).
public enum WAVRecording {
    /// The recording at 48 kHz mono (channels mixed, other rates converted), as 16-bit samples.
    public static func read(path: String) throws(AudioEndpointError) -> [Int16] {
        let audio: WAVCodec.Audio
        do {
            audio = try WAVCodec.decode(try readWholeFile(path))
        } catch let error as AudioEndpointError {
            throw error
        } catch {
            throw AudioEndpointError(endpoint: path, reason: "not a readable WAV file (\(error))")
        }
        guard audio.frameCount > 0 else { throw AudioEndpointError(endpoint: path, reason: "the WAV file holds no audio") }
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
