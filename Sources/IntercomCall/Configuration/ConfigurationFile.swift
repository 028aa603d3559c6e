import FoundationEssentials
import IntercomCore

/// The user's configuration file (TOML, as `ConfigurationText` reads it), read into the
/// command-line arguments its settings stand for, so that the same options check them.
public struct ConfigurationFile: Sendable {
    /// One value from the file, and where it stands.
    public struct Entry: Sendable {
        public let setting: ConfigurationSchema.Setting
        /// What the value means as command-line arguments.
        public let arguments: [String]
        /// The value as written, for `intercom config`.
        public let display: String
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
        let knownTables = Set(ConfigurationSchema.settings.map(\.table))
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
            guard let arguments = convert(value.value, for: setting) else {
                throw ConfigurationError(path: path, line: value.line, message: "\(setting.path): \(expectation(setting.kind))")
            }
            entries.append(Entry(setting: setting, arguments: arguments, display: ConfigurationText.literal(value.value), line: value.line))
        }
        return ConfigurationFile(path: path, entries: entries, warnings: warnings)
    }

    /// All entries as command-line arguments.
    public var arguments: [String] { entries.flatMap(\.arguments) }

    private static func convert(_ value: ConfigurationText.Value, for setting: ConfigurationSchema.Setting) -> [String]? {
        let option = "--" + setting.option
        switch (setting.kind, value) {
        case (.integer(let range), .integer(let number)) where range.contains(number):
            return [option, "\(number)"]
        case (.number(let range), .integer(let number)) where range.contains(Double(number)):
            return [option, "\(Double(number))"]
        case (.number(let range), .float(let number)) where range.contains(number):
            return [option, "\(number)"]
        case (.text, .string(let text)) where !text.isEmpty:
            return [option, text]
        case (.choice(let choices), .string(let text)) where choices.contains(text):
            return [option, text]
        case (.choice(let choices), .integer(let number)) where choices.contains("\(number)"):
            return [option, "\(number)"]
        case (.list, .string(let text)) where !text.isEmpty:
            // A list of one may be written as its one string (as `ptt-gpio` was, before a
            // device could have several buttons).
            return [option, text]
        case (.list, .array(let items)):
            let texts = items.compactMap { item -> String? in if case .string(let text) = item { text } else { nil } }
            guard texts.count == items.count else { return nil }
            return texts.flatMap { [option, $0] }
        case (.toggle, .boolean(let flag)):
            return [flag ? option : "--no-" + setting.option]
        default:
            return nil
        }
    }

    private static func expectation(_ kind: ConfigurationSchema.Kind) -> String {
        switch kind {
        case .integer(let range): "expected a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .number(let range): "expected a number from \(range.lowerBound) to \(range.upperBound)"
        case .text: "expected a non-empty string"
        case .choice(let choices): "expected one of " + choices.joined(separator: ", ")
        case .list: "expected a list of strings"
        case .toggle: "expected true or false"
        }
    }
}

/// A configuration file that cannot be used, with the place to look.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let path: String
    public let line: Int?
    public let message: String

    public var description: String { "\(path)\(line.map { ":\($0)" } ?? ""): \(message)" }
}
