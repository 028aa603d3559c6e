/// What counts as the far end playing nothing: every sample of a block within ±8 (−72 dBFS).
/// A silent peer sends nothing, but what the speaker plays between its words is not exact
/// zeros: the comfort noise of Opus's DTX updates and the drift resampler leave ±1-2 (in a
/// lab call of silence, 2,270 such samples in 7 s). Their echo lies well under any
/// microphone's own noise, so the echo canceller and the residual echo suppressor rest on
/// such blocks as on digital silence.
public enum SilentFarEnd {
    public static let largestSample: Int16 = 8

    public static func holds(_ block: some Sequence<Int16>) -> Bool {
        block.allSatisfy { $0 >= -largestSample && $0 <= largestSample }
    }
}
