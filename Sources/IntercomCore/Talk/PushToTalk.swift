/// Decides from key events whether the talk key is held, whatever the input can tell.
///
/// - `exact`: the input reports press and release (the kitty keyboard protocol, evdev, a
///   GPIO button).
/// - `autoRepeat`: a plain terminal reports only presses, repeated while the key is held
///   after the keyboard's initial repeat delay. The key counts as held from the first press
///   until the repeats stop: the first wait covers the initial delay (250–600 ms on common
///   systems), later waits one repeat interval.
/// - `latch`: a tap starts transmitting, the next tap stops it; holds are told apart as in
///   `autoRepeat`, so a key held long enough to repeat is still one tap.
///
/// Whatever the style, a transmission never lasts longer than `maximumTransmitNanoseconds`:
/// a stuck key or a forgotten latch is cut off, and the key must be let go before it can
/// transmit again.
public struct PushToTalk: Sendable {
    public enum Style: Sendable, Equatable {
        case exact
        case autoRepeat(initialDelayTimeout: UInt64, repeatTimeout: UInt64)
        case latch(initialDelayTimeout: UInt64, repeatTimeout: UInt64)

        /// Timeouts that cover common keyboards: 650 ms for the initial repeat delay, 150 ms
        /// between repeats (rates down to about 7 per second).
        public static let defaultInitialDelayTimeout = MediaTime.nanoseconds(.milliseconds(650))
        public static let repeatTimeout = MediaTime.nanoseconds(.milliseconds(150))
        public static let defaultAutoRepeat = Style.autoRepeat(initialDelayTimeout: defaultInitialDelayTimeout, repeatTimeout: repeatTimeout)
        public static let defaultLatch = Style.latch(initialDelayTimeout: defaultInitialDelayTimeout, repeatTimeout: repeatTimeout)
    }

    public enum KeyEvent: Sendable, Equatable {
        case press, `repeat`, release
    }

    public let style: Style
    public let maximumTransmitNanoseconds: UInt64
    public private(set) var isTransmitting = false
    /// Transmissions cut off by the safety limit.
    public private(set) var cutOffs = 0

    private var keyDown = false
    private var lastKeyEvent: UInt64 = 0
    private var repeatsSeen = false
    private var transmitStart: UInt64 = 0
    /// Set by a cut-off: nothing transmits until the key is let go.
    private var waitingForRelease = false

    public init(style: Style, maximumTransmitNanoseconds: UInt64 = MediaTime.nanoseconds(.seconds(120))) {
        self.style = style
        self.maximumTransmitNanoseconds = maximumTransmitNanoseconds
    }

    /// Feeds one key event of the talk key at `now` (monotonic nanoseconds).
    public mutating func handle(_ event: KeyEvent, now: UInt64) {
        switch style {
        case .exact:
            switch event {
            case .press, .repeat:
                if !keyDown { keyDown = true; start(now) }
            case .release:
                keyDown = false
                waitingForRelease = false
                stop()
            }
        case .autoRepeat:
            guard event != .release else {
                keyDown = false
                waitingForRelease = false
                stop()
                return
            }
            if beginsHold() { start(now) }
        case .latch:
            // A tap is a press that begins a new hold; the repeats of a held key are not taps.
            if event == .release {
                keyDown = false
            } else if beginsHold() {
                if isTransmitting || waitingForRelease {
                    waitingForRelease = false
                    stop()
                } else {
                    start(now)
                }
            }
        }
        lastKeyEvent = now
        tick(now: now)
    }

    /// Applies the timeouts at `now`; call it regularly (every frame, say).
    public mutating func tick(now: UInt64) {
        switch style {
        case .exact:
            break
        case .autoRepeat(let initialDelayTimeout, let repeatTimeout):
            let timeout = repeatsSeen ? repeatTimeout : initialDelayTimeout
            if keyDown && elapsed(since: lastKeyEvent, now) > timeout {
                keyDown = false
                waitingForRelease = false
                stop()
            }
        case .latch(let initialDelayTimeout, let repeatTimeout):
            let timeout = repeatsSeen ? repeatTimeout : initialDelayTimeout
            if keyDown && elapsed(since: lastKeyEvent, now) > timeout { keyDown = false }
        }
        if isTransmitting && elapsed(since: transmitStart, now) >= maximumTransmitNanoseconds {
            isTransmitting = false
            waitingForRelease = true
            cutOffs += 1
        }
    }

    /// Records a press of a key known only by its presses; true when it begins a new hold.
    private mutating func beginsHold() -> Bool {
        if keyDown {
            repeatsSeen = true
            return false
        }
        keyDown = true
        repeatsSeen = false
        return true
    }

    private mutating func start(_ now: UInt64) {
        guard !waitingForRelease else { return }
        isTransmitting = true
        transmitStart = now
    }

    private mutating func stop() {
        isTransmitting = false
    }

    /// Time since `start`, zero if the caller's clock went backwards.
    private func elapsed(since start: UInt64, _ now: UInt64) -> UInt64 { now >= start ? now - start : 0 }
}
