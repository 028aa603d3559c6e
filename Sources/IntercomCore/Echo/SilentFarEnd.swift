/// What counts as the far end playing nothing: every sample of a block within ±8 (−72 dBFS).
/// A silent peer sends next to nothing, but what the speaker plays between its words is not
/// exact zeros: what decoding its DTX updates leaves is ±1-2 (a file-to-file call of 7 s of
/// silence each way played 2,270 such samples at each end). Their echo lies well under any
/// microphone's own noise, so the echo canceller and the residual echo suppressor rest on
/// such blocks as on digital silence.
public enum SilentFarEnd {
    public static let largestSample: Int16 = 8

    public static func holds(_ block: some Sequence<Int16>) -> Bool {
        block.allSatisfy { $0 >= -largestSample && $0 <= largestSample }
    }
}
