import ArgumentParser
import IntercomIO

/// `intercom devices`: the ALSA devices to choose from with --capture and --playback.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the ALSA capture and playback devices for --capture and --playback.",
        discussion: """
            Names come from ALSA's configuration, as `arecord -L` and `aplay -L` show them: \
            hw:CARD=… is a card as it is, plughw:CARD=… converts for it, and default is what \
            ALSA's configuration routes to (PulseAudio or PipeWire when one runs). intercom \
            converts rate, channels and sample format itself, so hw: devices work too.
            """
    )

    func run() throws {
        let catalog = try ALSADeviceCatalog.read()
        if catalog.soundCardCount == 0 {
            print("No sound card found: only ALSA's software devices are listed.\n")
        }
        printGroup("Capture devices (--capture):", catalog.captureDevices)
        print()
        printGroup("Playback devices (--playback):", catalog.playbackDevices)
    }

    private func printGroup(_ title: String, _ devices: [ALSADeviceHint]) {
        print(title)
        guard !devices.isEmpty else {
            print("  (none)")
            return
        }
        let width = min(devices.map(\.name.count).max() ?? 0, 32)
        for device in devices {
            let padding = String(repeating: " ", count: max(0, width - device.name.count))
            print("  \(device.name)\(padding)  \(device.description)")
        }
    }
}
