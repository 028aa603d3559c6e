import Foundation
import TOMLKit

/// The user's configuration file (TOML), read into command-line arguments so that flags
/// given on the command line, which come after them, win.
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
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
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
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError(path: path, line: error.source.begin.line, message: error.description)
        } catch {
            throw ConfigurationError(path: path, line: nil, message: "\(error)")
        }
        let lines = KeyLines(text)
        var entries: [Entry] = []
        var warnings: [String] = []
        let knownTables = Set(ConfigurationSchema.settings.map(\.table))
        for tableName in table.keys.sorted() {
            guard knownTables.contains(tableName), let section = table[tableName]?.table else {
                warnings.append("\(path):\(lines.line(table: nil, key: tableName)): unknown key '\(tableName)' (ignored)")
                continue
            }
            for key in section.keys.sorted() {
                let line = lines.line(table: tableName, key: key)
                guard let setting = ConfigurationSchema.setting(table: tableName, key: key) else {
                    warnings.append("\(path):\(line): unknown key '\(tableName).\(key)' (ignored)")
                    continue
                }
                let value = section[key]!
                guard let (arguments, display) = convert(value, for: setting) else {
                    throw ConfigurationError(path: path, line: line, message: "\(setting.path): \(expectation(setting.kind))")
                }
                entries.append(Entry(setting: setting, arguments: arguments, display: display, line: line))
            }
        }
        return ConfigurationFile(path: path, entries: entries, warnings: warnings)
    }

    /// All entries as command-line arguments, to stand before the user's own.
    public var arguments: [String] { entries.flatMap(\.arguments) }

    private static func convert(_ value: TOMLValueConvertible, for setting: ConfigurationSchema.Setting) -> ([String], String)? {
        let option = "--" + setting.option
        switch setting.kind {
        case .integer(let range):
            guard let number = value.int, range.contains(number) else { return nil }
            return ([option, "\(number)"], "\(number)")
        case .number(let range):
            guard let number = value.double ?? value.int.map(Double.init), range.contains(number) else { return nil }
            return ([option, "\(number)"], "\(number)")
        case .text:
            guard let text = value.string, !text.isEmpty else { return nil }
            return ([option, text], "\"\(text)\"")
        case .choice(let choices):
            let text = value.string ?? value.int.map(String.init)
            guard let text, choices.contains(text) else { return nil }
            return ([option, text], text)
        case .list:
            guard let array = value.array else { return nil }
            let items = array.compactMap(\.string)
            guard items.count == array.count else { return nil }
            return (items.flatMap { [option, $0] }, "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]")
        case .toggle(let whenTrue, let whenFalse):
            guard let flag = value.bool else { return nil }
            let chosen = flag ? whenTrue : whenFalse
            return (chosen.map { ["--" + $0] } ?? [], "\(flag)")
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

/// Finds the line a key stands on, since the TOML parser reports lines only for syntax errors.
private struct KeyLines {
    let lines: [Substring]

    init(_ text: String) { lines = text.split(separator: "\n", omittingEmptySubsequences: false) }

    func line(table: String?, key: String) -> Int {
        var current: String?
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                current = line.trimmingCharacters(in: CharacterSet(charactersIn: "[] "))
                if table == nil && current == key { return index + 1 }
                continue
            }
            guard current == table else { continue }
            let name = line.split(separator: "=", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            if name == key { return index + 1 }
        }
        return 1
    }
}

/// A configuration file that cannot be used, with the place to look.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let path: String
    public let line: Int?
    public let message: String

    public var description: String { "\(path)\(line.map { ":\($0)" } ?? ""): \(message)" }
}
