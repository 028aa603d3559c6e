import CALSA
import Glibc
import IntercomCore

/// An open ALSA PCM in the format it agreed to, closed when released.
///
/// It is opened non-blocking and stays so: a busy device fails at once instead of holding the
/// caller, and transfers wait in `poll` with a time limit, so a device that stops delivering
/// cannot hang the audio thread.
final class ALSAPCM {
    let format: ALSANegotiatedFormat
    private let handle: OpaquePointer
    private let bytesPerFrame: Int
    private let counters: ALSAStreamCounters
    /// How long a transfer may wait for the device before it counts as stalled.
    private let stallMilliseconds: Int32
    /// The device's poll descriptors, refreshed before each wait.
    private var pollDescriptors: [pollfd]

    /// Opens `device` and negotiates the format nearest 48 kHz mono 16-bit it offers, with a
    /// period of about `periodSamples` at 48 kHz and a buffer of about `bufferMilliseconds`.
    /// Underruns and overruns it recovers from are counted in `counters`.
    init(
        device: String, direction: ALSADirection, periodSamples: Int, bufferMilliseconds: Int, counters: ALSAStreamCounters
    ) throws(ALSAError) {
        _ = alsaLibraryMessagesSilenced
        var opened: OpaquePointer?
        let stream = direction == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
        try checkALSA(snd_pcm_open(&opened, device, stream, SND_PCM_NONBLOCK), "snd_pcm_open")
        guard let opened else { throw ALSAError(function: "snd_pcm_open", code: -ENODEV) }
        do {
            format = try Self.negotiate(
                opened, direction: direction, periodSamples: periodSamples, bufferMilliseconds: bufferMilliseconds
            )
            try checkALSA(snd_pcm_prepare(opened), "snd_pcm_prepare")
        } catch {
            snd_pcm_close(opened)
            throw error
        }
        handle = opened
        bytesPerFrame = format.sampleFormat.bytesPerSample * format.channels
        self.counters = counters
        stallMilliseconds = Int32(max(2_000, MediaTime.milliseconds(frames: 4 * format.bufferFrames, rate: format.sampleRate)))
        pollDescriptors = Array(repeating: pollfd(), count: max(1, Int(snd_pcm_poll_descriptors_count(opened))))
    }

    deinit { snd_pcm_close(handle) }

    /// Reads exactly `frames` frames into `buffer`, waiting for the device to capture them.
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ALSAError) {
        try transfer(frames, function: "snd_pcm_readi") { offset, count in
            snd_pcm_readi(handle, buffer + offset, snd_pcm_uframes_t(count))
        }
    }

    /// Writes all `frames` frames from `buffer`, waiting for the device to make room.
    func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ALSAError) {
        try transfer(frames, function: "snd_pcm_writei") { offset, count in
            snd_pcm_writei(handle, buffer + offset, snd_pcm_uframes_t(count))
        }
    }

    /// Frames between the application and the air: captured but not yet read, or written
    /// but not yet played.
    var delayFrames: Int {
        var delay: snd_pcm_sframes_t = 0
        return snd_pcm_delay(handle, &delay) >= 0 ? max(0, delay) : 0
    }

    /// Starts a playback stream that is still waiting to fill its buffer, so what it holds plays.
    func startIfWaiting() {
        if snd_pcm_state(handle) == SND_PCM_STATE_PREPARED && delayFrames > 0 { snd_pcm_start(handle) }
    }

    private func transfer(
        _ frames: Int, function: String, _ move: (_ byteOffset: Int, _ count: Int) -> snd_pcm_sframes_t
    ) throws(ALSAError) {
        var done = 0
        // Since when the device has moved no audio, while it moves none.
        var idleSince: UInt64?
        while done < frames {
            let result = move(done * bytesPerFrame, frames - done)
            if result > 0 {
                done += result
                idleSince = nil
                continue
            }
            let code = Int32(result)
            switch code {
            case 0, -EAGAIN:
                let now = SystemClock.monotonicNanoseconds()
                if let idleSince {
                    guard now - idleSince < UInt64(stallMilliseconds) * UInt64(MediaTime.nanosecondsPerMillisecond) else { throw stalled() }
                    // Woken with nothing to move: some plugins' poll (PulseAudio's) says ready too
                    // early, and a real-time thread that spun on it would starve the plugin's own.
                    SystemClock.sleep(untilMonotonic: now + UInt64(MediaTime.nanosecondsPerMillisecond))
                } else {
                    idleSince = now
                }
                try waitForDevice()
            case -EINTR: continue
            case -EPIPE, -ESTRPIPE: try recover(code)
            default: throw ALSAError(function: function, code: code)
            }
        }
    }

    /// Waits in one `poll` for the device to have room or audio. `snd_pcm_wait` would loop
    /// over `poll` until the plugin reports an event, and the pulse plugin's descriptor can
    /// stay readable without one: that loop spins, and on a real-time thread starves the
    /// plugin's own threads. The caller instead tries the transfer again, pausing if it moves
    /// nothing.
    private func waitForDevice() throws(ALSAError) {
        let count = pollDescriptors.withUnsafeMutableBufferPointer {
            snd_pcm_poll_descriptors(handle, $0.baseAddress, UInt32($0.count))
        }
        guard count > 0 else { throw ALSAError(function: "snd_pcm_poll_descriptors", code: count < 0 ? count : -EIO) }
        let ready = pollDescriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t(count), stallMilliseconds) }
        if ready == 0 { throw stalled() }
        if ready < 0 && errno != EINTR { throw ALSAError(function: "poll", code: -errno) }
        // Plugins update their own state here (the pulse plugin re-arms its descriptor); what
        // the events say, the next transfer tells.
        var events: UInt16 = 0
        _ = pollDescriptors.withUnsafeMutableBufferPointer {
            snd_pcm_poll_descriptors_revents(handle, $0.baseAddress, UInt32(count), &events)
        }
    }

    private func stalled() -> ALSAError {
        ALSAError(function: "poll", code: -ETIMEDOUT, message: "no audio for \(stallMilliseconds) ms")
    }

    /// Restarts after an underrun or overrun (EPIPE) or a suspend (ESTRPIPE).
    private func recover(_ code: Int32) throws(ALSAError) {
        if code == -EPIPE { counters.xrunCount.wrappingAdd(1, ordering: .relaxed) }
        try checkALSA(snd_pcm_recover(handle, code, 1), "snd_pcm_recover")
    }

    private static func negotiate(
        _ pcm: OpaquePointer, direction: ALSADirection, periodSamples: Int, bufferMilliseconds: Int
    ) throws(ALSAError) -> ALSANegotiatedFormat {
        var hardware: OpaquePointer?
        try checkALSA(snd_pcm_hw_params_malloc(&hardware), "snd_pcm_hw_params_malloc")
        defer { snd_pcm_hw_params_free(hardware) }
        try checkALSA(snd_pcm_hw_params_any(pcm, hardware), "snd_pcm_hw_params_any")
        // SpeexDSP resamples better than alsa-lib's default; a plug device must show its real rates.
        try checkALSA(snd_pcm_hw_params_set_rate_resample(pcm, hardware, 0), "snd_pcm_hw_params_set_rate_resample")
        try checkALSA(
            snd_pcm_hw_params_set_access(pcm, hardware, SND_PCM_ACCESS_RW_INTERLEAVED), "snd_pcm_hw_params_set_access"
        )
        guard let sampleFormat = ALSASampleFormat.allCases.first(where: {
            snd_pcm_hw_params_test_format(pcm, hardware, $0.pcmFormat) == 0
        }) else {
            let known = ALSASampleFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw ALSAError(function: "snd_pcm_hw_params_test_format", code: -EINVAL, message: "offers none of \(known)")
        }
        try checkALSA(snd_pcm_hw_params_set_format(pcm, hardware, sampleFormat.pcmFormat), "snd_pcm_hw_params_set_format")
        var channels: UInt32 = 1
        try checkALSA(snd_pcm_hw_params_set_channels_near(pcm, hardware, &channels), "snd_pcm_hw_params_set_channels_near")
        var rate = UInt32(VoiceFormat.sampleRate)
        var roundingDirection: Int32 = 0
        try checkALSA(snd_pcm_hw_params_set_rate_near(pcm, hardware, &rate, &roundingDirection), "snd_pcm_hw_params_set_rate_near")
        var period = snd_pcm_uframes_t(MediaTime.samples(periodSamples, from: VoiceFormat.sampleRate, to: Int(rate)))
        try checkALSA(
            snd_pcm_hw_params_set_period_size_near(pcm, hardware, &period, &roundingDirection),
            "snd_pcm_hw_params_set_period_size_near"
        )
        var buffer = snd_pcm_uframes_t(max(2 * Int(period), MediaTime.samples(milliseconds: bufferMilliseconds, rate: Int(rate))))
        try checkALSA(snd_pcm_hw_params_set_buffer_size_near(pcm, hardware, &buffer), "snd_pcm_hw_params_set_buffer_size_near")
        try checkALSA(snd_pcm_hw_params(pcm, hardware), "snd_pcm_hw_params")
        try checkALSA(snd_pcm_hw_params_get_period_size(hardware, &period, &roundingDirection), "snd_pcm_hw_params_get_period_size")
        try checkALSA(snd_pcm_hw_params_get_buffer_size(hardware, &buffer), "snd_pcm_hw_params_get_buffer_size")

        var software: OpaquePointer?
        try checkALSA(snd_pcm_sw_params_malloc(&software), "snd_pcm_sw_params_malloc")
        defer { snd_pcm_sw_params_free(software) }
        try checkALSA(snd_pcm_sw_params_current(pcm, software), "snd_pcm_sw_params_current")
        try checkALSA(snd_pcm_sw_params_set_avail_min(pcm, software, period), "snd_pcm_sw_params_set_avail_min")
        if direction == .playback {
            // Playback starts once the buffer is full: the writer never waits before that, so
            // starting earlier would only invite an underrun.
            try checkALSA(
                snd_pcm_sw_params_set_start_threshold(pcm, software, buffer), "snd_pcm_sw_params_set_start_threshold"
            )
        }
        try checkALSA(snd_pcm_sw_params(pcm, software), "snd_pcm_sw_params")
        return ALSANegotiatedFormat(
            direction: direction, sampleRate: Int(rate), channels: Int(channels), sampleFormat: sampleFormat,
            periodFrames: Int(period), bufferFrames: Int(buffer)
        )
    }
}

/// alsa-lib's own stderr messages, silenced once per process: intercom logs device errors
/// itself, once per change of state, instead of at every retry.
private let alsaLibraryMessagesSilenced: Void = {
    _ = intercom_alsa_silence_library_messages()
}()
