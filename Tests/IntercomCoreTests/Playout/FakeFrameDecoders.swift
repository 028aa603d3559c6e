import IntercomCore

/// What the recording decoder was asked to render, in order.
enum RenderedFrame: Equatable {
    case decoded(Int)
    case recovered(Int)
    case concealed
    case silence
}

/// Renders each frame as a constant equal to its index, and records every decision it rendered.
final class RecordingDecoder: FrameDecoder {
    private(set) var log: [RenderedFrame] = []
    /// Called after each render; lets a test look at the jitter buffer at the moment of a decision.
    var onRender: ((RenderedFrame) -> Void)?

    func render(_ decision: consuming PlayoutDecision, samples: Int, into output: inout [Float]) {
        let rendered: RenderedFrame
        switch decision {
        case .decode(let payload):
            let frame = FramePayload.decode(payload)
            rendered = .decoded(frame.index)
            output = Array(repeating: Float(frame.index), count: frame.samples)
        case .recoverWithFEC(let nextPayload, let samples):
            let index = FramePayload.decode(nextPayload).index - 1
            rendered = .recovered(index)
            output = Array(repeating: Float(index), count: samples)
        case .conceal(let samples):
            rendered = .concealed
            output = Array(repeating: 0, count: samples)
        case .comfortSilence(let samples):
            rendered = .silence
            output = Array(repeating: 0, count: samples)
        }
        log.append(rendered)
        onRender?(rendered)
    }
}

/// Renders every decoded frame as a constant level; everything else as silence.
final class ConstantLevelDecoder: FrameDecoder {
    var level: Float

    init(level: Float) {
        self.level = level
    }

    func render(_ decision: consuming PlayoutDecision, samples: Int, into output: inout [Float]) {
        if case .decode(let payload) = decision {
            output = Array(repeating: level, count: FramePayload.decode(payload).samples)
        } else {
            output = Array(repeating: 0, count: samples)
        }
    }
}

extension Sequence<RenderedFrame> {
    /// Indices of frames played from their own packet or recovered by FEC, in playout order.
    var playedIndices: [Int] {
        compactMap {
            switch $0 {
            case .decoded(let index), .recovered(let index): index
            case .concealed, .silence: nil
            }
        }
    }

    var decodedIndices: [Int] {
        compactMap { if case .decoded(let index) = $0 { index } else { nil } }
    }

    func count(of frame: RenderedFrame) -> Int {
        count { $0 == frame }
    }

    var recoveredCount: Int {
        count { if case .recovered = $0 { true } else { false } }
    }
}
