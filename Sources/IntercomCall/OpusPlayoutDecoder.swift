import IntercomCore
import IntercomDSP

/// The decode stage of a receive chain: turns each playout decision into samples with the
/// stream's own Opus decoder. A packet that fails to decode is concealed, never played raw.
final class OpusPlayoutDecoder: FrameDecoder {
    /// Nil only if libopus could not allocate a decoder: the stream then plays silence.
    private let decoder: OpusDecoder?
    private let undecodable: PlaybackCounter

    init(undecodable: PlaybackCounter) {
        decoder = try? OpusDecoder()
        self.undecodable = undecodable
    }

    func render(_ decision: PlayoutDecision, samples: Int) -> [Float] {
        guard let decoder else { return silence(samples) }
        switch decision {
        case .decode(let payload):
            if let decoded = try? decoder.decode(payload) { return decoded }
            undecodable.count += 1
            return conceal(samples, with: decoder)
        case .recoverWithFEC(let next, let samples):
            return (try? decoder.recover(samples: samples, fromNext: next)) ?? conceal(samples, with: decoder)
        case .conceal(let samples):
            return conceal(samples, with: decoder)
        case .comfortSilence(let samples):
            return silence(samples)
        }
    }

    private func conceal(_ samples: Int, with decoder: OpusDecoder) -> [Float] {
        (try? decoder.conceal(samples: samples)) ?? silence(samples)
    }

    private func silence(_ samples: Int) -> [Float] { [Float](repeating: 0, count: samples) }
}

/// A count kept by the playback thread alone.
final class PlaybackCounter {
    var count = 0
}
