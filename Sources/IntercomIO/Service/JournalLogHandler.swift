import Glibc
import IntercomCore
import Logging

/// Log lines for systemd's journal, when it is what stderr is connected to: each line starts
/// with its syslog priority (`<4>` for a warning, sd-daemon(3)'s prefixes) and carries no
/// timestamp, since the journal keeps its own. Every line is one line: control characters in
/// messages and metadata (which may hold remote strings) are replaced.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String

    public init(label: String, level: Logger.Level) {
        self.label = label
        logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let line = Self.line(level: event.level, label: label, message: "\(event.message)", metadata: metadata.merging(event.metadata ?? [:]) { $1 })
        // One write(2) per line, so lines from several threads never interleave.
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// The syslog priority of a level (debug 7 … critical 2).
    public static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// One journal line: `<priority>label: message key=value…`.
    public static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        let fields = metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        return "<\(priority(of: level))>\(label): " + TerminalText.sanitized(message + fields, limit: 2_048) + "\n"
    }

    /// Whether stderr is the journal: `$JOURNAL_STREAM` names its device and inode (systemd.exec(5)).
    public static func isJournal(environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return stream == "\(status.st_dev):\(status.st_ino)"
    }
}
