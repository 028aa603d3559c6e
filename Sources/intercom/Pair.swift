import ArgumentParser
import FoundationEssentials
import Glibc
import IntercomCall
import IntercomCore
import IntercomIO

/// `intercom pair`: trust another device, by a six-digit code.
struct Pair: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pair with another device by a six-digit code, so that the two can call each other.",
        discussion: """
            On one device run 'intercom pair': it prints a code and waits. On the other run \
            'intercom pair --code CODE': it finds the waiting device on the LAN (or --peer \
            HOST:PORT) and both store each other as trusted, then print the other's name and \
            fingerprint. Both devices given the same --code pair too. A wrong code fails on both \
            sides and stores nothing; after three wrong codes the waiting device gives up. \
            Exit codes: 0 paired, 77 wrong code, 75 timed out, 64 usage.
            """
    )

    @Option(help: ArgumentHelp("The code the other device printed (six digits).", valueName: "CODE"))
    var code: String?

    @Option(help: ArgumentHelp("The device to pair with, without discovery.", valueName: "HOST:PORT"))
    var peer: String?

    @Option(help: ArgumentHelp("How long the code lasts.", valueName: "SECONDS"))
    var timeout: Double = 120

    @Option(help: "UDP port to use (any free one if it is taken).")
    var port: Int = 5004

    @Option(help: ArgumentHelp("The name the other device stores for this one.", valueName: "NAME"))
    var name: String?

    @Option(help: ArgumentHelp("A running daemon's status socket: without --state-dir, a daemon found there pairs its own identity.", valueName: "PATH"))
    var socket = StatusSocket.defaultPath

    @OptionGroup(title: "Identity") var identity: IdentityOptions

    func validate() throws {
        if let code, code.count != 6 || !code.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw ValidationError("--code must be the six digits the other device printed")
        }
        guard timeout.isFinite, timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be between 0 and 3600 seconds") }
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is not from 0 to 65535") }
        if peer != nil, code == nil { throw ValidationError("--peer needs --code: the device that waits prints the code") }
    }

    func run() throws {
        // Where a daemon runs, it is the daemon's identity that pairs (unless --state-dir says whose).
        if identity.stateDirectory == nil, peer == nil, access(socket, F_OK) == 0 {
            return try pairDaemon()
        }
        var options = PairingSession.Options()
        options.code = code
        options.peer = try peer.map { text in
            do {
                return try SocketAddress.parse(text, label: "--peer")
            } catch {
                throw ValidationError("\(error)")
            }
        }
        options.timeout = .seconds(timeout)
        options.port = port
        if let name { options.name = name }
        let session = PairingSession(
            identity: try identity.identity(), store: try identity.trustedDevices(), options: options,
            logger: makeLogger(verbose: false)
        ) { line in StandardStream.output.write(line + "\n") }
        try report(try session.run())
    }

    private func report(_ outcome: PairingSession.Outcome) throws {
        switch outcome {
        case .paired(let name, let fingerprint):
            print("paired with \(name) (\(fingerprint))")
        case .wrongCode:
            StandardStream.error.write("intercom: wrong code: nothing was stored\n")
            throw ExitCode(77)
        case .timedOut:
            StandardStream.error.write("intercom: no device paired within \(Int(timeout)) s\n")
            throw ExitCode(75)
        }
    }

    /// Asks the daemon at `socket` to pair, and follows its progress.
    private func pairDaemon() throws {
        let daemon = DaemonRequest(socket: socket, otherwise: "pair another identity with --state-dir")
        let started = try daemon.ask(.pair(code: code))
        guard case .pairingStarted(let issued) = started else { throw ValidationError("the daemon answered: \(started.refusal)") }
        let say = { (line: String) in StandardStream.output.write(line + "\n") }
        say("pairing the running daemon (\(socket))")
        if let issued { say("code: \(issued)") }
        let deadline = Date().addingTimeInterval(Double(PairingSession.Options().timeout.components.seconds) + 10)
        while Date() < deadline {
            usleep(250_000)
            switch try daemon.ask(.pairResult) {
            case .pairingRunning: continue
            case .paired(let name, let fingerprint): return try report(.paired(name: name, fingerprint: fingerprint))
            case .pairingWrongCode: return try report(.wrongCode)
            case .pairingTimedOut: return try report(.timedOut)
            case let other: throw ValidationError("the daemon answered: \(other.refusal)")
            }
        }
        try report(.timedOut)
    }
}
