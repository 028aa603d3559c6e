import IntercomCore
import IntercomDSP

/// An open capture device, and the conversion of what it captures (any rate, channel count
/// and sample format) into 48 kHz mono 16-bit samples.
final class ALSACaptureStream: ALSAStream {
    let pcm: ALSAPCM
    private let resampler: Resampler?
    /// One device period as captured, interleaved in the device's format.
    private let deviceBytes: UnsafeMutableRawPointer
    /// The same period mixed to mono.
    private let mono: UnsafeMutablePointer<Float>
    /// Resampler output, some of a period at 48 kHz.
    private let resampled: UnsafeMutableBufferPointer<Float>
    /// Converted samples not yet handed out: a period rarely holds a whole number of frames.
    private var pending: [Int16] = []
    /// CLOCK_REALTIME nanoseconds at which the device captured its first sample.
    private(set) var firstSampleTime: WallClockTime?

    init(device: String, frameSamples: Int, periodSamples: Int, bufferMilliseconds: Int, counters: ALSAStreamCounters) throws(ALSAStreamFailure) {
        (pcm, resampler) = try Self.openDevice(
            device, direction: .capture, periodSamples: periodSamples, bufferMilliseconds: bufferMilliseconds, counters: counters)
        let format = pcm.format
        let bytes = format.periodFrames * format.channels * format.sampleFormat.bytesPerSample
        deviceBytes = .allocate(byteCount: bytes, alignment: 16)
        mono = .allocate(capacity: format.periodFrames)
        resampled = .allocate(capacity: MediaTime.samples(format.periodFrames, from: format.sampleRate, to: VoiceFormat.sampleRate) + 64)
        pending.reserveCapacity(frameSamples + resampled.count)
    }

    deinit {
        deviceBytes.deallocate()
        mono.deallocate()
        resampled.deallocate()
    }

    /// Fills `frame`, waiting for the device to capture as many periods as that takes.
    func read(into frame: inout [Int16]) throws(ALSAStreamFailure) {
        while pending.count < frame.count { try captureOnePeriod() }
        for i in frame.indices { frame[i] = pending[i] }
        pending.removeFirst(frame.count)
    }

    /// Audio captured after the frame just read and not yet handed out: in the device, in
    /// the resampler's filter, and converted but pending.
    var delayNanoseconds: UInt64 {
        let format = pcm.format
        let deviceFrames = pcm.delayFrames + (resampler?.inputLatency ?? 0)
        return MediaTime.nanoseconds(frames: deviceFrames, rate: format.sampleRate)
            + MediaTime.nanoseconds(frames: pending.count, rate: VoiceFormat.sampleRate)
    }

    private func captureOnePeriod() throws(ALSAStreamFailure) {
        let format = pcm.format
        do {
            try pcm.read(into: deviceBytes, frames: format.periodFrames)
        } catch {
            throw .device(error)
        }
        if firstSampleTime == nil {
            // The period just read began its own length plus what still waits behind it ago.
            let age = MediaTime.nanoseconds(frames: format.periodFrames + pcm.delayFrames, rate: format.sampleRate)
            firstSampleTime = WallClockTime(nanosecondsSince1970: SystemClock.realtimeNanoseconds() - age)
        }
        format.sampleFormat.mixToMono(deviceBytes, frames: format.periodFrames, channels: format.channels, into: mono)
        let period = UnsafeBufferPointer(start: mono, count: format.periodFrames)
        guard let resampler else {
            append(period)
            return
        }
        try resampler.resampleAll(period, through: resampled) { append($0) }
    }

    private func append(_ samples: UnsafeBufferPointer<Float>) {
        for sample in samples { pending.append(int16(fromFloat: sample)) }
    }
}
