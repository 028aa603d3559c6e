import FoundationEssentials
import IntercomCore

/// The user's configuration file (TOML, as `ConfigurationText` reads it): each value checked
/// against its setting (`ConfigurationSchema`), for the options to take where the command line
/// left them out.
public struct ConfigurationFile: Sendable {
    /// One value from the file, and where it stands.
    public struct Entry: Sendable {
        public let setting: ConfigurationSchema.Setting
        /// The value, of a kind and in a range the setting takes.
        public let value: ConfigurationText.Value
        /// The value as written, for `intercom config`.
        public var display: String { ConfigurationText.literal(value) }
        public let line: Int
    }

    public let path: String
    public let entries: [Entry]
    /// Unknown keys and tables, each with its line: reported, then ignored.
    public let warnings: [String]

    /// `$XDG_CONFIG_HOME/intercom/config.toml`, or `~/.config/intercom/config.toml`.
    public static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.config"
        return base + "/intercom/config.toml"
    }

    /// Reads the file; a missing file is an empty configuration.
    public static func load(path: String = defaultPath) throws(ConfigurationError) -> ConfigurationFile {
        guard FileManager.default.fileExists(atPath: path) else { return ConfigurationFile(path: path, entries: [], warnings: []) }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError(path: path, line: nil, message: "cannot be read")
        }
        return try parse(text, path: path)
    }

    /// Parses configuration text; `path` names it in messages.
    public static func parse(_ text: String, path: String) throws(ConfigurationError) -> ConfigurationFile {
        let values: [ConfigurationText.Entry]
        do {
            values = try ConfigurationText.parse(text)
        } catch {
            throw ConfigurationError(path: path, line: error.line, message: error.message)
        }
        var entries: [Entry] = []
        var warnings: [String] = []
        var unknownTables: Set<String> = []
        let knownTables = Set(ConfigurationSchema.tables)
        for value in values.sorted(by: { ($0.table, $0.key) < ($1.table, $1.key) }) {
            let key = TerminalText.sanitized(value.key)
            guard knownTables.contains(value.table) else {
                if value.table.isEmpty {
                    warnings.append("\(path):\(value.line): unknown key '\(key)' outside a table (ignored)")
                } else if unknownTables.insert(value.table).inserted {
                    warnings.append("\(path):\(value.line): unknown table [\(TerminalText.sanitized(value.table))] (ignored)")
                }
                continue
            }
            guard let setting = ConfigurationSchema.setting(table: value.table, key: value.key) else {
                warnings.append("\(path):\(value.line): unknown key '\(value.table).\(key)' (ignored)")
                continue
            }
            guard setting.accepts(value.value) else {
                throw ConfigurationError(path: path, line: value.line, message: "\(setting.path): \(setting.expectation)")
            }
            entries.append(Entry(setting: setting, value: value.value, line: value.line))
        }
        return ConfigurationFile(path: path, entries: entries, warnings: warnings)
    }

    /// The file's value for `setting`, if it gives one.
    public func value(of setting: ConfigurationSchema.Setting) -> ConfigurationText.Value? {
        entries.first { $0.setting.path == setting.path }?.value
    }
}

/// A configuration file that cannot be used, with the place to look.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let path: String
    public let line: Int?
    public let message: String

    public var description: String { "\(path)\(line.map { ":\($0)" } ?? ""): \(message)" }
}
