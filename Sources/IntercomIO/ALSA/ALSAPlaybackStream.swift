import IntercomCore
import IntercomDSP

/// An open playback device, and the conversion of 48 kHz mono float frames into what it
/// plays (any rate, channel count and sample format).
final class ALSAPlaybackStream: ALSAStream {
    let pcm: ALSAPCM
    private let resampler: Resampler?
    /// Resampler output at the device's rate, mono.
    private let resampled: UnsafeMutableBufferPointer<Float>
    /// Up to `resampled.count` device frames, interleaved in the device's format.
    private let deviceBytes: UnsafeMutableRawPointer
    /// CLOCK_REALTIME nanoseconds at which the device plays the first sample written.
    private(set) var firstSampleTime: WallClockTime?

    init(device: String, frameSamples: Int, periodSamples: Int, bufferMilliseconds: Int, counters: ALSAStreamCounters) throws(ALSAStreamFailure) {
        (pcm, resampler) = try Self.openDevice(
            device, direction: .playback, periodSamples: periodSamples, bufferMilliseconds: bufferMilliseconds, counters: counters)
        let format = pcm.format
        let capacity = MediaTime.samples(frameSamples, from: VoiceFormat.sampleRate, to: format.sampleRate) + 64
        resampled = .allocate(capacity: capacity)
        deviceBytes = .allocate(byteCount: capacity * format.channels * format.sampleFormat.bytesPerSample, alignment: 16)
    }

    deinit {
        resampled.deallocate()
        deviceBytes.deallocate()
    }

    /// Plays `frame`, waiting for the device to make room for it.
    func write(_ frame: [Float]) throws(ALSAStreamFailure) {
        if firstSampleTime == nil {
            let ahead = MediaTime.nanoseconds(frames: pcm.delayFrames, rate: pcm.format.sampleRate)
            firstSampleTime = WallClockTime(nanosecondsSince1970: SystemClock.realtimeNanoseconds() + ahead)
        }
        try frame.withUnsafeBufferPointer { (samples) throws(ALSAStreamFailure) in try resampleAndPlay(samples) }
    }

    /// How long until a sample written now is heard: the device's queue and the resampler's filter.
    var delayNanoseconds: UInt64 {
        MediaTime.nanoseconds(frames: pcm.delayFrames, rate: pcm.format.sampleRate)
            + MediaTime.nanoseconds(frames: resampler?.inputLatency ?? 0, rate: VoiceFormat.sampleRate)
    }

    /// Lets what is queued play out, for at most `limit` nanoseconds.
    func playOut(limit: UInt64) {
        pcm.startIfWaiting()
        SystemClock.sleep(untilMonotonic: SystemClock.monotonicNanoseconds() + min(delayNanoseconds, limit))
    }

    private func resampleAndPlay(_ samples: UnsafeBufferPointer<Float>) throws(ALSAStreamFailure) {
        guard let resampler else {
            try play(samples)
            return
        }
        try resampler.resampleAll(samples, through: resampled) { (piece) throws(ALSAStreamFailure) in try play(piece) }
    }

    /// Spreads mono samples at the device's rate over its channels and format, and writes them.
    private func play(_ samples: UnsafeBufferPointer<Float>) throws(ALSAStreamFailure) {
        let format = pcm.format
        var start = 0
        while start < samples.count {
            let count = min(samples.count - start, resampled.count)
            guard let chunk = UnsafeBufferPointer(rebasing: samples[start..<(start + count)]).baseAddress else { return }
            format.sampleFormat.spread(chunk, frames: count, channels: format.channels, into: deviceBytes)
            do {
                try pcm.write(deviceBytes, frames: count)
            } catch {
                throw .device(error)
            }
            start += count
        }
    }
}
