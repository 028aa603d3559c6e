import ArgumentParser
import FoundationEssentials
import IntercomCore
import IntercomIO
import IntercomSecurity

/// `intercom paired`: the devices this one trusts.
struct Paired: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the devices this one has paired with.",
        discussion: "Only paired devices (and this device's own processes) can join a call with it."
    )

    @Flag(help: "Print a JSON array of objects with name, fingerprint, paired_at and last_seen.")
    var json = false

    @OptionGroup(title: "Identity") var identity: IdentityOptions

    struct Listing: Encodable {
        var name: String
        var fingerprint: String
        var pairedAt: Date
        var lastSeen: Date?

        enum CodingKeys: String, CodingKey {
            case name, fingerprint, pairedAt = "paired_at", lastSeen = "last_seen"
        }
    }

    func run() throws {
        let devices = try identity.trustedDevices().load()
        let listings = devices.map { device in
            Listing(
                name: TerminalText.sanitized(device.name),
                fingerprint: device.keyBytes.map { Fingerprint(publicKey: $0).description } ?? "invalid key",
                pairedAt: device.pairedAt, lastSeen: device.lastSeen)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(listings), as: UTF8.self))
            return
        }
        let own = Fingerprint(publicKey: try identity.identity().publicKey)
        print("this device: \(own)")
        guard !listings.isEmpty else {
            print("no paired devices: pair one with 'intercom pair'")
            return
        }
        for listing in listings {
            let seen = listing.lastSeen.map { "last seen \($0.formatted(.iso8601))" } ?? "not seen since pairing"
            print("\(listing.fingerprint)  \(listing.name)  paired \(listing.pairedAt.formatted(.iso8601))  \(seen)")
        }
    }
}

/// `intercom unpair`: stop trusting a device.
struct Unpair: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop trusting a paired device: it can no longer join, and running calls drop it within 2 s.",
        discussion: "Name the device by its name or its fingerprint (from 'intercom paired'); a name that several devices share is refused."
    )

    @Argument(help: ArgumentHelp("The device's name or fingerprint.", valueName: "NAME|FINGERPRINT"))
    var device: String

    @OptionGroup(title: "Identity") var identity: IdentityOptions

    func run() throws {
        do {
            let removed = try identity.trustedDevices().remove(matching: device)
            let fingerprint = removed.keyBytes.map { Fingerprint(publicKey: $0).description } ?? "?"
            print("unpaired \(TerminalText.sanitized(removed.name)) (\(fingerprint))")
        } catch let error as TrustedDeviceError {
            throw ValidationError("\(error)")
        }
    }
}
