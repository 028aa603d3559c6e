import ArgumentParser
import IntercomCall
import IntercomCore
import IntercomIO

/// How a command that changes a running daemon asks it, over the daemon's status socket.
struct DaemonRequest {
    let socket: String
    /// What the user can do instead when the socket may not be used, such as "pair another
    /// identity with --state-dir".
    let otherwise: String

    /// The daemon's reply. A socket that cannot be asked exits 69 (EX_UNAVAILABLE) with what
    /// to do about it; an answer that is not a reply fails the same way, shown sanitized.
    func ask(_ request: StatusRequest, passing descriptor: Int32? = nil) throws -> StatusReply {
        let line: String
        do {
            line = try StatusSocket.ask(request, path: socket, passing: descriptor)
        } catch {
            StandardStream.error.write(
                "intercom: a daemon's status socket is at \(socket), but \(error); run as the daemon's user (or with sudo), or \(otherwise)\n")
            throw ExitCode(69)
        }
        do {
            return try StatusReply(line: line)
        } catch {
            throw Failure(.unavailable, message: "the daemon answered: \(TerminalText.sanitized(line.trimmingWhitespace()))")
        }
    }
}
