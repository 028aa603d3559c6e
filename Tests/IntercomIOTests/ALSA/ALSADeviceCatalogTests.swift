import IntercomIO
import Testing
import TestSupport

@Suite struct ALSADeviceCatalogTests {
    @Test func catalogListsSoftwareDevicesEvenWithoutASoundCard() throws {
        let catalog = try ALSADeviceCatalog.read()
        let null = catalog.devices.first { $0.name == "null" }
        #expect(null?.canCapture == true && null?.canPlay == true)
        #expect(null?.description.isEmpty == false)
    }

    @Test(needsAudioLab) func catalogListsTheLabsDevicesWithTheirDescriptions() async throws {
        let lab = try await AudioLab.start(devices: ["mic_a", "44k"])
        defer { lab.stop() }
        let catalog = try ALSADeviceCatalog.read()
        let microphone = catalog.devices.first { $0.name == lab.alsaName("mic_a") }
        #expect(microphone?.description == "intercom lab: null sink mic_a (48000 Hz, 1 ch)")
        #expect(catalog.captureDevices.contains { $0.name == lab.alsaName("44k") })
        #expect(catalog.playbackDevices.contains { $0.name == lab.alsaName("44k") })
        // The plain pulse PCM behind the fixed-format device is not for users.
        #expect(!catalog.devices.contains { $0.name == lab.alsaName("44k_pulse") })
    }
}
