import Synchronization

/// What befell an ALSA endpoint's device, readable from any thread while the audio thread
/// runs it.
public final class ALSAStreamCounters: Sendable {
    let xrunCount = Atomic<Int>(0)
    let faultCount = Atomic<Int>(0)
    let recoveryCount = Atomic<Int>(0)
    let deviceOpen = Atomic<Bool>(false)

    init() {}

    /// Underruns (playback) or overruns (capture), each recovered with `snd_pcm_recover`.
    public var xruns: Int { xrunCount.load(ordering: .relaxed) }
    /// Times the device became unavailable: missing when first opened, or failing in use.
    public var faults: Int { faultCount.load(ordering: .relaxed) }
    /// Times the device came back after it had been missing.
    public var recoveries: Int { recoveryCount.load(ordering: .relaxed) }
    /// Whether the device is open now (once the endpoint is closed: whether it was open until
    /// then); while it is not, capture hears silence and playback goes nowhere.
    public var isDeviceOpen: Bool { deviceOpen.load(ordering: .relaxed) }
}
