import Glibc
import IntercomCore
import Synchronization

/// The controlling terminal, in the state talk mode needs: keys arrive one by one without
/// echo, the screen is the alternate screen, the cursor is hidden. `restore()` puts
/// everything back; it is safe to call on any exit path and more than once.
public final class Terminal: Sendable {
    private let input = STDIN_FILENO
    /// What `restore()` undoes: the settings before `enter()`, and whether the kitty keyboard
    /// protocol was asked for. A signal's shutdown may restore while the interface thread reads.
    private struct Changes {
        var saved: termios?
        var keyboardProtocolPushed = false
    }
    private let changes = Mutex(Changes())

    public init() {}

    deinit { restore() }

    /// True when both standard input and output are a terminal.
    public static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Colour only where the terminal has it and the user did not say NO_COLOR.
    public static var supportsColour: Bool {
        if let noColour = getenv("NO_COLOR"), noColour.pointee != 0 { return false }
        guard let term = getenv("TERM").map({ String(cString: $0) }) else { return false }
        return term != "dumb" && !term.isEmpty
    }

    /// Raw keys, alternate screen, hidden cursor. Signals (Ctrl-C) still arrive as signals,
    /// so the usual graceful shutdown runs, and that restores the terminal.
    public func enter() throws(TerminalError) {
        var attributes = termios()
        guard tcgetattr(input, &attributes) == 0 else { throw TerminalError(operation: "tcgetattr", code: errno) }
        changes.withLock { $0.saved = attributes }
        attributes.c_lflag &= ~tcflag_t(ICANON | ECHO)
        attributes.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &attributes.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSANOW, &attributes) == 0 else { throw TerminalError(operation: "tcsetattr", code: errno) }
        write("\u{1B}[?1049h\u{1B}[?25l")
    }

    /// Asks for press/repeat/release reports (kitty keyboard protocol) if the terminal
    /// answers the query within `timeoutMilliseconds`; returns whether it did.
    public func enableKeyEventTypes(timeoutMilliseconds: Int32 = 300) -> Bool {
        write(String(decoding: TerminalInputParser.supportQuery, as: UTF8.self))
        var parser = TerminalInputParser()
        var supported = false
        var waited: Int32 = 0
        // The device-attributes reply always comes after the kitty reply, if any.
        while waited < timeoutMilliseconds {
            let bytes = read(timeoutMilliseconds: 20)
            waited += 20
            if bytes.isEmpty { continue }
            for event in parser.feed(bytes) {
                if case .keyboardProtocolSupported = event { supported = true }
            }
            if bytes.contains(UInt8(ascii: "c")) { break }
        }
        if supported {
            write(String(decoding: TerminalInputParser.enableEventTypes, as: UTF8.self))
            changes.withLock { $0.keyboardProtocolPushed = true }
        }
        return supported
    }

    /// Puts the terminal back as it was.
    public func restore() {
        let undo = changes.withLock { changes in
            defer { changes = Changes() }
            return changes
        }
        if undo.keyboardProtocolPushed {
            write(String(decoding: TerminalInputParser.restore, as: UTF8.self))
        }
        guard var attributes = undo.saved else { return }
        write("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(input, TCSANOW, &attributes)
    }

    /// Columns and rows, or 80×24 when the terminal does not say.
    public var size: (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Draws `lines` from the top, clearing what the previous frame left behind.
    public func draw(_ lines: [String]) {
        let rows = size.rows
        var frame = "\u{1B}[H"
        for line in lines.prefix(rows) { frame += line + "\u{1B}[K\r\n" }
        frame += "\u{1B}[J"
        write(frame)
    }

    /// Bytes typed so far, waiting at most `timeoutMilliseconds` for the first.
    public func read(timeoutMilliseconds: Int32) -> [UInt8] {
        var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeoutMilliseconds) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = Glibc.read(input, &buffer, buffer.count)
        return count > 0 ? Array(buffer.prefix(count)) : []
    }

    public func write(_ text: String) {
        StandardStream.output.write(text)
    }
}

public struct TerminalError: Error, CustomStringConvertible {
    public let operation: String
    public let code: Int32
    public var description: String { "terminal: \(operation) failed: \(String(cString: strerror(code)))" }
}
