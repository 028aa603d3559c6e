import ArgumentParser
import Glibc
import IntercomCall
import IntercomCore
import IntercomIO

/// `intercom volume`, `intercom mute` and `intercom unmute`: how loud a paired device plays
/// here, remembered with it in the trusted list, so that it holds in every later call and
/// running calls follow within 2 s.
struct ListeningOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The paired device's name or fingerprint (from 'intercom paired').", valueName: "NAME|FINGERPRINT"))
    var device: String

    @Option(help: ArgumentHelp("A running daemon's status socket: without --state-dir, a daemon found there changes its own list.", valueName: "PATH"))
    var socket = StatusSocket.defaultPath

    @OptionGroup(title: "Identity") var identity: IdentityOptions

    /// Asks the daemon at `socket` where one runs (and no --state-dir says whose list), else
    /// changes the list of this user's state directory; prints how the device plays now.
    func change(_ request: StatusRequest, _ change: (inout PeerListening) -> Void) throws {
        if identity.stateDirectory == nil, access(socket, F_OK) == 0 {
            return try ask(request)
        }
        do {
            let changed = try identity.trustedDevices().changeListening(matching: device, change)
            print(changed.listeningDescription)
        } catch let error as TrustedDeviceError {
            throw ValidationError("\(error)")
        }
    }

    private func ask(_ request: StatusRequest) throws {
        guard StatusRequest.parse(Array(request.line.utf8)) == .success(request) else {
            throw ValidationError("a device's name or fingerprint is printable and at most \(StatusRequest.maximumDeviceBytes) bytes")
        }
        let answer = try DaemonRequest(socket: socket, otherwise: "change another state directory's list with --state-dir").ask(request)
        guard case .listening(let name, let fingerprint, let volumePercent, let muted) = answer else {
            throw ValidationError("the daemon answered: \(answer.refusal)")
        }
        let shown = StatusReply.listeningDescription(name: name, fingerprint: fingerprint, volumePercent: volumePercent, muted: muted)
        print("\(shown) in the running daemon (\(socket))")
    }
}

struct Volume: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set how loud a paired device plays here, remembered for every call.",
        discussion: "100 plays it as sent; running calls follow within 2 s. A muted device stays muted (see 'intercom unmute')."
    )

    @OptionGroup var target: ListeningOptions

    @Argument(help: ArgumentHelp("Percent of the level it was sent at, from \(PeerListening.volumeRange.lowerBound) to \(PeerListening.volumeRange.upperBound).", valueName: "PERCENT"))
    var percent: Int

    func validate() throws {
        guard PeerListening.volumeRange.contains(percent) else {
            throw ValidationError("the volume is a percentage from \(PeerListening.volumeRange.lowerBound) to \(PeerListening.volumeRange.upperBound)")
        }
    }

    func run() throws {
        try target.change(.volume(device: target.device, percent: percent)) { $0 = PeerListening(volumePercent: percent, muted: $0.muted) }
    }
}

struct Mute: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop hearing a paired device here, remembered for every call (its volume is kept).",
        discussion: "Running calls follow within 2 s; 'intercom unmute' undoes it."
    )

    @OptionGroup var target: ListeningOptions

    func run() throws {
        try target.change(.mute(device: target.device)) { $0.muted = true }
    }
}

struct Unmute: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hear a muted paired device again, at its remembered volume."
    )

    @OptionGroup var target: ListeningOptions

    func run() throws {
        try target.change(.unmute(device: target.device)) { $0.muted = false }
    }
}
