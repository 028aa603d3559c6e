import IntercomCore
import IntercomDSP

/// The decode stage of a receive chain: turns each playout decision into samples with the
/// stream's own Opus decoder. A packet that fails to decode is concealed, never played raw.
final class OpusPlayoutDecoder: FrameDecoder {
    /// Nil only if libopus could not allocate a decoder: the stream then plays silence.
    private let decoder: OpusDecoder?
    private let undecodable: PlaybackCounter
    /// Takes each payload once it is decoded, for its storage to be used again.
    private let spent: (consuming [UInt8]) -> Void

    init(undecodable: PlaybackCounter, spent: @escaping (consuming [UInt8]) -> Void = { _ in }) {
        decoder = try? OpusDecoder()
        self.undecodable = undecodable
        self.spent = spent
    }

    func discard(_ payload: consuming [UInt8]) {
        spent(payload)
    }

    func render(_ decision: consuming PlayoutDecision, samples: Int, into output: inout [Float]) {
        guard let decoder else { return silence(samples, into: &output) }
        switch consume decision {
        case .decode(let payload):
            if (try? decoder.decode(payload, into: &output)) == nil {
                undecodable.count += 1
                conceal(samples, with: decoder, into: &output)
            }
            // Given up, not shared: the network thread refills it without copying.
            spent(consume payload)
        case .recoverWithFEC(let next, let samples):
            if (try? decoder.recover(samples: samples, fromNext: next, into: &output)) != nil { return }
            conceal(samples, with: decoder, into: &output)
        case .conceal(let samples):
            conceal(samples, with: decoder, into: &output)
        case .comfortSilence(let samples):
            silence(samples, into: &output)
        }
    }

    private func conceal(_ samples: Int, with decoder: OpusDecoder, into output: inout [Float]) {
        if (try? decoder.conceal(samples: samples, into: &output)) == nil { silence(samples, into: &output) }
    }

    private func silence(_ samples: Int, into output: inout [Float]) {
        output.removeAll(keepingCapacity: true)
        output.append(contentsOf: repeatElement(0, count: samples))
    }
}

/// A count kept by the playback thread alone.
final class PlaybackCounter {
    var count = 0
}
