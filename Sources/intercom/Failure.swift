import ArgumentParser
import FoundationEssentials
import IntercomIO
import Glibc

/// A fault met while running (not a usage error): one line on stderr naming the culprit, no
/// usage text, and a sysexits(3) code that says what kind of fault it was, so that scripts and
/// systemd (`RestartPreventExitStatus=`) can tell a mistake from bad luck.
struct Failure: Error, CustomStringConvertible {
    enum Kind: Int32 {
        /// EX_DATAERR: the input is there but is not what it should be (a WAV file that is not one).
        case badInput = 65
        /// EX_NOINPUT: an input or configuration file that is missing or cannot be read.
        case noInput = 66
        /// EX_UNAVAILABLE: a port, device or service that cannot be had.
        case unavailable = 69
        /// EX_SOFTWARE: anything else that went wrong inside intercom.
        case software = 70
        /// EX_CANTCREAT: an output that may not or cannot be written (a link, a folder others write).
        case cannotCreate = 73
        /// EX_CONFIG: a configuration file with a mistake in it.
        case configuration = 78
    }

    let kind: Kind
    let message: String

    var description: String { message }

    init(_ kind: Kind, _ error: any Error) {
        self.kind = kind
        message = "\(error)"
    }

    init(_ kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }
}

/// Runs one step; what it throws becomes a `Failure` of `kind`, unless it is already one, or
/// a usage error (which keeps its usage text and code 64).
func failing<T>(as kind: Failure.Kind, _ step: () throws -> T) throws -> T {
    do {
        return try step()
    } catch {
        throw classified(error, as: kind)
    }
}

func failing<T>(as kind: Failure.Kind, _ step: () async throws -> T) async throws -> T {
    do {
        return try await step()
    } catch {
        throw classified(error, as: kind)
    }
}

private func classified(_ error: any Error, as kind: Failure.Kind) -> any Error {
    error is ValidationError || error is Failure || error is ExitCode ? error : Failure(kind, error)
}

extension Intercom {
    /// Reports `error` the way its kind asks and exits: a `Failure` as one line and its code,
    /// anything else (usage errors, help, version) as swift-argument-parser does.
    static func exit(reporting error: any Error) -> Never {
        guard let failure = error as? Failure else { exit(withError: error) }
        StandardStream.error.write("Error: \(failure.message)\n")
        Glibc.exit(failure.kind.rawValue)
    }
}
