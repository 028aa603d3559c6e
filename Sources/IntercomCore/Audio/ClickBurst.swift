/// A burst of energy over a held background, and whether it is a click or speech: what the
/// talk key's guard (`TalkKeyClickGuard`) and the key click suppressor (`KeyClickSuppressor`)
/// both follow, block by block, each in the band where a click stands out.
///
/// The background is the band's energy peak, held and falling by `fall` a block, so that it
/// stays near the level of speech under way through the pauses between its syllables. A block
/// `jump` over it starts a burst, and the background does not follow a burst until it is taken
/// for speech (so a click is measured against the room before it). A burst is speech when the
/// caller says it started as a voice (its low band rose with it, within `voicedRise` of the
/// band's rise), once it has lasted `clickBlocks`, or when from block `riseBlocks` on a block is
/// within 3 dB of the burst's loudest, in the band or in the whole signal (a click has decayed
/// by then; speech is rising or held). A burst not taken for speech goes on while its blocks
/// stay `stay` over the background it started from.
struct ClickBurst: Sendable {
    let jump: Float
    let stay: Float
    let fall: Float
    let floor: Float
    let clickBlocks: Int
    let riseBlocks: Int
    /// 0: no burst starts as a voice.
    let voicedRise: Float

    /// The peak energy held (full scale = 1), or nil before the first block.
    private var background: Float?
    /// Blocks since the current burst began, or nil when no burst is under way.
    private var blocks: Int?
    private var peak: Float = 0
    /// The loudest block of the burst in the signal's own energy (where voiced speech is).
    private var plainPeak: Float = 0
    private(set) var isSpeech = false

    init(jump: Float, stay: Float, fall: Float, floor: Float, clickBlocks: Int, riseBlocks: Int, voicedRise: Float = 0) {
        self.jump = jump
        self.stay = stay
        self.fall = fall
        self.floor = floor
        self.clickBlocks = clickBlocks
        self.riseBlocks = riseBlocks
        self.voicedRise = voicedRise
    }

    /// Follows one block: `energy` in the band followed, `plain` in the whole signal, and
    /// `lowBandRise`, how far the low band rose over its own background in this block. Returns
    /// the background it was measured against (the floor at least) and whether the block is
    /// part of a burst.
    mutating func observe(energy: Float, plain: Float, lowBandRise: Float = 0) -> (reference: Float, hot: Bool) {
        let held = background ?? energy
        let reference = max(held, floor)
        let inClick = blocks != nil && !isSpeech
        let hot = energy > reference * (inClick ? stay : jump)
        if hot {
            let count = blocks.map { $0 + 1 } ?? 0
            if count == 0 {
                peak = 0
                plainPeak = 0
                isSpeech = lowBandRise * voicedRise >= energy / reference
            }
            blocks = count
            peak = max(peak, energy)
            plainPeak = max(plainPeak, plain)
            let sustained = energy * 2 >= peak || plain * 2 >= plainPeak
            if !isSpeech && (count + 1 >= clickBlocks || (count >= riseBlocks && sustained)) {
                isSpeech = true
            }
            background = isSpeech ? max(held * fall, energy) : held
        } else {
            blocks = nil
            isSpeech = false
            background = max(held * fall, energy)
        }
        return (reference, hot)
    }
}
