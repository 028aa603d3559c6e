import CALSA
import Glibc

/// A PCM device named by ALSA's configuration, as `aplay -L` and `arecord -L` list them.
public struct ALSADeviceHint: Sendable, Equatable {
    /// What to pass to `--capture` or `--playback`.
    public let name: String
    /// The configuration's description, its lines joined; empty when it has none.
    public let description: String
    public let canCapture: Bool
    public let canPlay: Bool
}

/// The sound devices ALSA knows about on this machine.
public struct ALSADeviceCatalog: Sendable {
    public let devices: [ALSADeviceHint]
    /// Sound cards the kernel has; zero on a machine with software devices only.
    public let soundCardCount: Int

    public var captureDevices: [ALSADeviceHint] { devices.filter(\.canCapture) }
    public var playbackDevices: [ALSADeviceHint] { devices.filter(\.canPlay) }

    /// Reads the PCM name hints of every card and of the configuration (`snd_device_name_hint`).
    public static func read() throws(ALSAError) -> ALSADeviceCatalog {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        try checkALSA(snd_device_name_hint(-1, "pcm", &hints), "snd_device_name_hint")
        defer { if let hints { snd_device_name_free_hint(hints) } }
        var devices: [ALSADeviceHint] = []
        var next = hints
        while let hint = next?.pointee {
            if let name = value(of: "NAME", in: hint) {
                // IOID names the one direction a device has; without it, it has both.
                let direction = value(of: "IOID", in: hint)
                let description = value(of: "DESC", in: hint)?
                    .split(separator: "\n").map { $0.trimmingSpaces() }.joined(separator: " — ") ?? ""
                devices.append(ALSADeviceHint(
                    name: name, description: description,
                    canCapture: direction != "Output", canPlay: direction != "Input"
                ))
            }
            next = next?.successor()
        }
        return ALSADeviceCatalog(devices: devices, soundCardCount: countSoundCards())
    }

    private static func value(of field: String, in hint: UnsafeMutableRawPointer) -> String? {
        guard let text = snd_device_name_get_hint(hint, field) else { return nil }
        defer { free(text) }
        return String(cString: text)
    }

    private static func countSoundCards() -> Int {
        var card: Int32 = -1
        var count = 0
        while snd_card_next(&card) >= 0 && card >= 0 { count += 1 }
        return count
    }
}

private extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
