import COpus
import IntercomCore

/// Owns one libopus decoder: 48 kHz mono, with concealment and in-band FEC recovery.
public final class OpusDecoder {
    private let state: OpaquePointer
    /// Room for the longest Opus packet (120 ms), decoded into before the frame is copied out.
    private var scratch = [Float](repeating: 0, count: OpusDecoder.maximumFrameSamples)

    public static let maximumFrameSamples = VoiceFormat.samples(milliseconds: 120)

    public init() throws(OpusError) {
        var error: Int32 = OPUS_OK
        guard let state = opus_decoder_create(Int32(VoiceFormat.sampleRate), Int32(VoiceFormat.channels), &error),
              error == OPUS_OK else { throw OpusError(code: error) }
        self.state = state
    }

    deinit { opus_decoder_destroy(state) }

    /// How many 48 kHz samples a packet holds, without decoding it.
    public static func sampleCount(of packet: [UInt8]) throws(OpusError) -> Int {
        guard !packet.isEmpty else { throw .emptyPacket }
        return Int(try checkOpus(opus_packet_get_nb_samples(packet, Int32(packet.count), Int32(VoiceFormat.sampleRate))))
    }

    /// Decodes a received packet.
    public func decode(_ packet: [UInt8]) throws(OpusError) -> [Float] {
        var output: [Float] = []
        try decode(packet, into: &output)
        return output
    }

    /// Decodes a received packet into `output`, replacing what it held; with room in it (the
    /// longest packet, `maximumFrameSamples`), nothing is allocated.
    public func decode(_ packet: [UInt8], into output: inout [Float]) throws(OpusError) {
        output.removeAll(keepingCapacity: true)
        guard !packet.isEmpty else { throw .emptyPacket }
        try run(packet, samples: Self.maximumFrameSamples, fec: false, into: &output)
    }

    /// Rebuilds a lost frame of `samples` from the redundancy carried in the packet that followed it.
    /// Where that packet holds no FEC (CELT-only, or FEC off), libopus conceals instead.
    public func recover(samples: Int, fromNext packet: [UInt8]) throws(OpusError) -> [Float] {
        var output: [Float] = []
        try recover(samples: samples, fromNext: packet, into: &output)
        return output
    }

    /// `recover` into `output`, replacing what it held.
    public func recover(samples: Int, fromNext packet: [UInt8], into output: inout [Float]) throws(OpusError) {
        output.removeAll(keepingCapacity: true)
        guard !packet.isEmpty else { throw .emptyPacket }
        try checkLossDuration(samples)
        try run(packet, samples: samples, fec: true, into: &output)
    }

    /// Packet-loss concealment: extrapolates `samples` from what was decoded before.
    public func conceal(samples: Int) throws(OpusError) -> [Float] {
        var output: [Float] = []
        try conceal(samples: samples, into: &output)
        return output
    }

    /// `conceal` into `output`, replacing what it held.
    public func conceal(samples: Int, into output: inout [Float]) throws(OpusError) {
        output.removeAll(keepingCapacity: true)
        try checkLossDuration(samples)
        try run(nil, samples: samples, fec: false, into: &output)
    }

    private func checkLossDuration(_ samples: Int) throws(OpusError) {
        // Opus conceals in multiples of 2.5 ms.
        let quantum = VoiceFormat.opusFrameQuantum
        guard samples > 0, samples <= Self.maximumFrameSamples, samples % quantum == 0 else {
            throw .invalidFrameSize(got: samples, expected: quantum)
        }
    }

    private func run(_ packet: [UInt8]?, samples: Int, fec: Bool, into output: inout [Float]) throws(OpusError) {
        output.removeAll(keepingCapacity: true)
        let decoded = try scratch.withUnsafeMutableBufferPointer { (out) throws(OpusError) in
            try checkOpus(opus_decode_float(
                state, packet, Int32(packet?.count ?? 0), out.nonNullAddress, Int32(samples), fec ? 1 : 0
            ))
        }
        output.append(contentsOf: scratch[0..<Int(decoded)])
    }
}
