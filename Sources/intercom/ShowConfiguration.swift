import FoundationEssentials
import IntercomIO
import ArgumentParser
import IntercomCall
import IntercomCore

/// `intercom config`: the settings a call would use, and where each came from.
struct ShowConfiguration: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective configuration and where each value came from.",
        discussion: "Reads \(ConfigurationFile.defaultPath) (TOML: \(ConfigurationSchema.tables.map { "[\($0)]" }.joined(separator: ", ")) tables); flags given here override it as they would for a call."
    )

    @OptionGroup var options: SettingsOptions

    func run() throws {
        let file = try options.configuration.load()
        // Warnings go to stderr: what is printed is a configuration file itself.
        for warning in file.warnings { StandardStream.error.write("warning: \(warning)\n") }
        let effective = try CallSettings(options, file: file)
        print("# \(file.path)\(file.entries.isEmpty ? " (no settings)" : "")")
        var table = ""
        for setting in ConfigurationSchema.settings {
            if setting.table != table {
                print("\n[\(setting.table)]")
                table = setting.table
            }
            let source: String
            if options.isGiven(setting.path) {
                source = "command line"
            } else if let entry = file.entries.first(where: { $0.setting.path == setting.path }) {
                source = "\(file.path):\(entry.line)"
            } else {
                source = "default"
            }
            // Valid TOML that reads back to the same settings; an unset one stays a comment.
            let line = effective.shownValue(setting.path).map { "\(setting.key) = \(ConfigurationText.literal($0))" }
                ?? "# \(setting.key) = (not set)"
            print(line.padded(to: 40) + " # \(source)")
        }
    }
}
