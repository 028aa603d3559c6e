import IntercomCore
import IntercomDSP
import Testing
import TestSupport

@Suite struct OpusCodecTests {
    /// Encodes `speech` frame by frame; the last partial frame is dropped.
    static func encodeAll(_ speech: [Float], with encoder: OpusEncoder) throws -> [[UInt8]] {
        let frame = encoder.configuration.frameLength.samples
        return try stride(from: 0, to: speech.count - frame + 1, by: frame).map { start in
            try encoder.encode(Array(speech[start..<(start + frame)]))
        }
    }

    @Test(arguments: [10, 20])
    func roundTripOfSpeechCorrelatesStrongly(frameMilliseconds: Int) throws {
        let speech = try SpeechFixture.speech(SpeechFixture.sentence)
        var configuration = OpusEncoderConfiguration()
        configuration.frameMilliseconds = frameMilliseconds
        configuration.bitrate = 32_000
        let encoder = try OpusEncoder(configuration: configuration)
        let decoder = try OpusDecoder()
        let packets = try Self.encodeAll(speech, with: encoder)
        let decoded = try packets.flatMap { try decoder.decode($0) }

        #expect(decoded.count == packets.count * configuration.frameLength.samples)
        let alignment = SignalMeasures.bestAlignment(of: speech, in: decoded, lags: 0...2000)
        // The codec's delay is its lookahead.
        #expect(abs(alignment.lag - encoder.lookaheadSamples) <= 4)
        // Opus is perceptual, not waveform-exact: the high bands are coded by shape, not phase.
        #expect(alignment.correlation > 0.85, "correlation \(alignment.correlation)")
    }

    /// The low-delay path: restricted low-delay CELT in 5 ms frames, 2.5 ms of lookahead
    /// against the VOIP application's 6.5 ms, and speech still comes through.
    @Test func theLowDelayEncoderLooksAheadTwoAndAHalfMilliseconds() throws {
        let speech = try SpeechFixture.speech(SpeechFixture.sentence)
        let settings = OpusEncoderConfiguration().lowDelay
        let encoder = try OpusEncoder(configuration: settings)
        #expect(settings.frameLength.samples == 240)
        #expect(encoder.lookaheadSamples == 120)
        #expect(try OpusEncoder(configuration: OpusEncoderConfiguration()).lookaheadSamples == 312)
        let decoder = try OpusDecoder()
        let packets = try Self.encodeAll(speech, with: encoder)
        let decoded = try packets.flatMap { try decoder.decode($0) }
        let alignment = SignalMeasures.bestAlignment(of: speech, in: decoded, lags: 0...2000)
        #expect(abs(alignment.lag - 120) <= 4)
        #expect(alignment.correlation > 0.85, "correlation \(alignment.correlation)")
    }

    /// The jitter buffer keeps a frame of margin for FEC only while packets may carry it, as
    /// their first byte tells: never the low-delay encoder's (CELT), always the robust one's.
    @Test func onlyTheRobustEncodersPacketsMayCarryFEC() throws {
        let speech = Array(try SpeechFixture.speech(SpeechFixture.sentence).prefix(96_000))
        let robust = try Self.encodeAll(speech, with: try OpusEncoder(configuration: OpusEncoderConfiguration()))
        let lowDelay = try Self.encodeAll(speech, with: try OpusEncoder(configuration: OpusEncoderConfiguration().lowDelay))
        #expect(robust.allSatisfy { OpusTableOfContents.mayCarryFEC($0) })
        #expect(!lowDelay.contains { OpusTableOfContents.mayCarryFEC($0) })
    }

    /// The jitter buffer reads each packet's length from its first byte; libopus must agree,
    /// for every frame length and mode the encoders make.
    @Test func packetLengthsReadFromTheHeaderAgreeWithLibopus() throws {
        let speech = try SpeechFixture.speech(SpeechFixture.sentence)
        var settings: [OpusEncoderConfiguration] = [OpusEncoderConfiguration().lowDelay]
        for milliseconds in [5, 10, 20] {
            var voip = OpusEncoderConfiguration()
            voip.frameMilliseconds = milliseconds
            settings.append(voip)
        }
        for configuration in settings {
            let packets = try Self.encodeAll(Array(speech.prefix(48_000)), with: try OpusEncoder(configuration: configuration))
            for packet in packets {
                #expect(OpusTableOfContents.samples(of: packet) == (try OpusDecoder.sampleCount(of: packet)))
                #expect(OpusTableOfContents.samples(of: packet) == configuration.frameLength.samples)
            }
        }
    }

    @Test func missingPacketIsConcealedWithAFrameOfTheRightLength() throws {
        let speech = try SpeechFixture.speech(SpeechFixture.sentence)
        let encoder = try OpusEncoder()
        let decoder = try OpusDecoder()
        let packets = try Self.encodeAll(Array(speech.prefix(48_000)), with: encoder)
        for packet in packets.prefix(20) { _ = try decoder.decode(packet) }
        let concealed = try decoder.conceal(samples: encoder.configuration.frameLength.samples)
        #expect(concealed.count == encoder.configuration.frameLength.samples)
        // Concealment continues the signal rather than cutting to silence.
        #expect(SignalMeasures.rms(concealed) > 0)
    }

    /// Error energy over the lost frames, relative to decoding with no loss (dB, lower is better).
    static func lossError(recoverWithFEC: Bool, packets: [[UInt8]], lost: Set<Int>, frame: Int) throws -> Double {
        let clean = try OpusDecoder()
        let lossy = try OpusDecoder()
        var errorEnergy = 0.0
        var signalEnergy = 0.0
        for (index, packet) in packets.enumerated() {
            let reference = try clean.decode(packet)
            let played: [Float]
            if lost.contains(index) {
                if recoverWithFEC, index + 1 < packets.count {
                    played = try lossy.recover(samples: frame, fromNext: packets[index + 1])
                } else {
                    played = try lossy.conceal(samples: frame)
                }
                errorEnergy += SignalMeasures.energy(zip(reference, played).map { $0 - $1 })
                signalEnergy += SignalMeasures.energy(reference)
            } else {
                _ = try lossy.decode(packet)
            }
        }
        return SignalMeasures.decibels(errorEnergy, over: signalEnergy)
    }

    @Test(arguments: [10, 20])
    func forwardErrorCorrectionRecoversBetterThanConcealment(frameMilliseconds: Int) throws {
        let speech = try SpeechFixture.speech()
        var configuration = OpusEncoderConfiguration()
        configuration.frameMilliseconds = frameMilliseconds
        configuration.forwardErrorCorrection = true
        configuration.expectedLossPercent = 10
        let encoder = try OpusEncoder(configuration: configuration)
        let packets = try Self.encodeAll(speech, with: encoder)
        // Every seventh frame lost, never two in a row, so the next packet is always there.
        let lost = Set(stride(from: 10, to: packets.count - 1, by: 7))
        let frame = configuration.frameLength.samples

        let withFEC = try Self.lossError(recoverWithFEC: true, packets: packets, lost: lost, frame: frame)
        let withPLC = try Self.lossError(recoverWithFEC: false, packets: packets, lost: lost, frame: frame)
        #expect(withFEC < withPLC - 3, "FEC error \(withFEC) dB, PLC error \(withPLC) dB")
    }

    @Test func dtxMakesSilencePacketsTiny() throws {
        var configuration = OpusEncoderConfiguration()
        configuration.discontinuousTransmission = true
        let encoder = try OpusEncoder(configuration: configuration)
        let silence = [Float](repeating: 0, count: configuration.frameLength.samples)
        let sizes = try (0..<100).map { _ in try encoder.encode(silence).count }
        #expect(sizes.suffix(50).allSatisfy { $0 <= 2 } || sizes.suffix(50).filter { $0 <= 2 }.count > 40)
    }
}
