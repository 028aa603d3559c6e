import COpus
import IntercomCore

/// Owns one libopus encoder: 48 kHz mono, VOIP or restricted low-delay application.
public final class OpusEncoder {
    public let configuration: OpusEncoderConfiguration
    private let state: OpaquePointer
    private var packet = [UInt8](repeating: 0, count: OpusEncoder.maximumPacketBytes)

    /// RFC 6716's bound on one frame's packet.
    public static let maximumPacketBytes = 1275

    public init(configuration: OpusEncoderConfiguration = .init()) throws(OpusError) {
        try configuration.validate()
        var error: Int32 = OPUS_OK
        guard let state = opus_encoder_create(
            Int32(VoiceFormat.sampleRate), Int32(VoiceFormat.channels),
            configuration.application == .voip ? OPUS_APPLICATION_VOIP : OPUS_APPLICATION_RESTRICTED_LOWDELAY, &error
        ), error == OPUS_OK else { throw OpusError(code: error) }
        self.state = state
        self.configuration = configuration
        do {
            try set(INTERCOM_OPUS_SET_BITRATE, configuration.bitrate)
            try set(INTERCOM_OPUS_SET_COMPLEXITY, configuration.complexity)
            try set(INTERCOM_OPUS_SET_INBAND_FEC, configuration.forwardErrorCorrection ? 1 : 0)
            try set(INTERCOM_OPUS_SET_PACKET_LOSS_PERC, configuration.expectedLossPercent)
            try set(INTERCOM_OPUS_SET_DTX, configuration.discontinuousTransmission ? 1 : 0)
            try set(INTERCOM_OPUS_SET_VBR, configuration.variableBitrate ? 1 : 0)
            try set(INTERCOM_OPUS_SET_VBR_CONSTRAINT, configuration.constrainedVariableBitrate ? 1 : 0)
            try set(INTERCOM_OPUS_SET_SIGNAL, Int(OPUS_SIGNAL_VOICE))
        } catch {
            opus_encoder_destroy(state)
            throw error
        }
    }

    deinit { opus_encoder_destroy(state) }

    /// Samples the encoder looks ahead: part of the codec's delay.
    public var lookaheadSamples: Int {
        var value: Int32 = 0
        _ = intercom_opus_get_int(state, INTERCOM_OPUS_GET_LOOKAHEAD, &value)
        return Int(value)
    }

    /// Forgets what the encoder learned from earlier audio, for a stream that resumes with it
    /// after another encoder's frames.
    public func reset() {
        _ = intercom_opus_encoder_reset(state)
    }

    /// Changes the loss rate FEC is sized for, e.g. from the peers' receiver reports.
    public func setExpectedLoss(percent: Int) throws(OpusError) {
        guard OpusEncoderConfiguration.allowedLossPercent.contains(percent) else {
            throw .invalidSetting(name: "expected loss (%)", value: percent, allowed: OpusEncoderConfiguration.allowedLossPercent)
        }
        try set(INTERCOM_OPUS_SET_PACKET_LOSS_PERC, percent)
    }

    /// Changes the target bitrate, e.g. for the number of devices the stream goes to.
    public func setBitrate(_ bitsPerSecond: Int) throws(OpusError) {
        try OpusEncoderConfiguration.check("bitrate", bitsPerSecond, OpusEncoderConfiguration.allowedBitrates)
        try set(INTERCOM_OPUS_SET_BITRATE, bitsPerSecond)
    }

    /// Encodes one frame of 16-bit PCM. A packet of two bytes or less is a DTX frame that need not be sent.
    public func encode(_ pcm: UnsafeBufferPointer<Int16>) throws(OpusError) -> ArraySlice<UInt8> {
        try checkFrame(pcm.count)
        let written = try packet.withUnsafeMutableBufferPointer { (out) throws(OpusError) in
            try checkOpus(opus_encode(state, pcm.nonNullAddress, Int32(pcm.count), out.nonNullAddress, Int32(out.count)))
        }
        return packet[0..<Int(written)]
    }

    /// Encodes one frame of float PCM in [-1, 1].
    public func encode(_ pcm: UnsafeBufferPointer<Float>) throws(OpusError) -> ArraySlice<UInt8> {
        try checkFrame(pcm.count)
        let written = try packet.withUnsafeMutableBufferPointer { (out) throws(OpusError) in
            try checkOpus(opus_encode_float(state, pcm.nonNullAddress, Int32(pcm.count), out.nonNullAddress, Int32(out.count)))
        }
        return packet[0..<Int(written)]
    }

    public func encode(_ pcm: [Int16]) throws(OpusError) -> [UInt8] {
        try Array(pcm.withUnsafeBufferPointer { (buffer) throws(OpusError) in try encode(buffer) })
    }

    public func encode(_ pcm: [Float]) throws(OpusError) -> [UInt8] {
        try Array(pcm.withUnsafeBufferPointer { (buffer) throws(OpusError) in try encode(buffer) })
    }

    private func checkFrame(_ count: Int) throws(OpusError) {
        guard count == configuration.frameLength.samples else {
            throw .invalidFrameSize(got: count, expected: configuration.frameLength.samples)
        }
    }

    private func set(_ request: Int32, _ value: Int) throws(OpusError) {
        try checkOpus(intercom_opus_set_int(state, request, Int32(value)))
    }
}
