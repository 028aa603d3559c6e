import Foundation
import IntercomCall
import IntercomCore
import Testing
import TestSupport

@Suite struct ConfigurationFileTests {
    /// The file's values by setting path, as written.
    static func written(_ file: ConfigurationFile) -> [String: String] {
        Dictionary(uniqueKeysWithValues: file.entries.map { ($0.setting.path, $0.display) })
    }

    @Test func eachValueIsKeptForItsSetting() throws {
        let file = try ConfigurationFile.parse("""
            [network]
            port = 6001
            peers = ["10.0.0.2:5004", "[::1]:5004"]
            discovery = false

            [talk]
            mode = "vox"
            ptt-max-seconds = 30

            [audio]
            aec = false
            frame-ms = 20
            """, path: "test.toml")
        #expect(file.warnings.isEmpty)
        #expect(Self.written(file) == [
            "audio.aec": "false", "audio.frame-ms": "20",
            "network.discovery": "false", "network.peers": #"["10.0.0.2:5004", "[::1]:5004"]"#, "network.port": "6001",
            "talk.mode": #""vox""#, "talk.ptt-max-seconds": "30",
        ])
        #expect(file.entries.first { $0.setting.path == "network.port" }?.line == 2)
    }

    /// Inputs on which the TOML library used before aborted (found by fuzzing): refused, with the line.
    @Test(arguments: ["[é]\n", "port = 1\n[=]\n", "[[ #]]\n", "\n\n  [.]\n", "[{]", "[[[a]]]", "[\n1 [a]", "\u{FEFF}[\u{15}t", "alk=[[[[}"])
    func malformedInputIsRefusedNotACrash(text: String) {
        #expect(throws: ConfigurationError.self) { try ConfigurationFile.parse(text, path: "t.toml") }
    }

    @Test func whatConfigShowsReadsBackToTheSameSettings() throws {
        let file = try ConfigurationFile.parse(#"""
            [network]
            name = "door \\ \"front\"\tbell"
            peers = ['10.0.0.2:5004']
            [talk]
            ptt-max-seconds = 30
            """#, path: "t.toml")
        let shown = Dictionary(grouping: file.entries, by: \.setting.table).map { table, entries in
            "[\(table)]\n" + entries.map { "\($0.setting.key) = \($0.display)\n" }.joined()
        }.joined()
        let again = try ConfigurationFile.parse(shown, path: "t.toml")
        #expect(again.entries.map(\.value) == file.entries.map(\.value))
        #expect(file.value(of: ConfigurationSchema.name) == .string("door \\ \"front\"\tbell"))
    }

    static let invalid: [(text: String, line: Int, mentions: String)] = [
        ("[network]\nport = \"abc\"\n", 2, "network.port"),
        ("[network]\nname = \"x\"\nport = 70000\n", 3, "0 to 65535"),
        ("[talk]\n\nmode = \"shout\"\n", 3, "ptt, vox, open"),
        ("[audio]\naec = 1\n", 2, "true or false"),
        ("[network\nport = 1\n", 1, "]"),
    ]

    @Test(arguments: invalid)
    func anInvalidValueNamesFileAndLine(case: (text: String, line: Int, mentions: String)) {
        #expect {
            _ = try ConfigurationFile.parse(`case`.text, path: "/etc/x.toml")
        } throws: { error in
            let description = "\(error)"
            return description.hasPrefix("/etc/x.toml:\(`case`.line):") && description.contains(`case`.mentions)
        }
    }

    /// A list of one may be its one string: `ptt-gpio = "gpiochip0:17"`, as files said before a
    /// device could have several buttons, still reads.
    @Test func aListOfOneMayBeWrittenAsItsString() throws {
        let file = try ConfigurationFile.parse("[talk]\nptt-gpio = \"gpiochip0:17\"\nptt-key = [\"KEY_F13\", \"KEY_F14=room:kitchen\"]\n", path: "c.toml")
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        #expect(file.value(of: ConfigurationSchema.pttGPIO) == .string("gpiochip0:17"))
        #expect(file.value(of: ConfigurationSchema.pttKeys) == .array([.string("KEY_F13"), .string("KEY_F14=room:kitchen")]))
    }

    @Test func unknownKeysAreWarnedAboutWithTheirLine() throws {
        let file = try ConfigurationFile.parse("[network]\nport = 1\ncolour = \"blue\"\n\n[extras]\nx = 1\n", path: "c.toml")
        #expect(file.warnings.sorted() == ["c.toml:3: unknown key 'network.colour' (ignored)", "c.toml:6: unknown table [extras] (ignored)"])
        #expect(Self.written(file) == ["network.port": "1"])
    }

    @Test func theCommandShowsWhereEachValueCameFrom() throws {
        let home = temporaryPath("xdg")
        try FileManager.default.createDirectory(atPath: home + "/intercom", withIntermediateDirectories: true)
        try "[network]\nport = 6001\n\n[talk]\nmode = \"vox\"\nloudness = 3\n".write(toFile: home + "/intercom/config.toml", atomically: true, encoding: .utf8)
        let process = try ChildProcess(ChildProcess.intercomPath, ["config", "--mode", "open"], environment: ["XDG_CONFIG_HOME": home])
        #expect(process.wait(seconds: 10) == 0, "\(process.standardError)")
        let output = process.standardOutput
        #expect(output.contains("port = 6001") && output.contains("config.toml:2"), "\(output)")
        #expect(output.split(separator: "\n").contains { $0.hasPrefix("mode = \"open\"") && $0.hasSuffix("# command line") }, "\(output)")
        #expect(process.standardError.contains("unknown key 'talk.loudness'"), "\(process.standardError)")

        // What it printed is a configuration file that gives the same settings.
        let copy = temporaryPath("xdg-copy")
        try FileManager.default.createDirectory(atPath: copy + "/intercom", withIntermediateDirectories: true)
        try output.write(toFile: copy + "/intercom/config.toml", atomically: true, encoding: .utf8)
        let reread = try ChildProcess(ChildProcess.intercomPath, ["config"], environment: ["XDG_CONFIG_HOME": copy])
        #expect(reread.wait(seconds: 10) == 0, "\(reread.standardError)")
        func settings(_ text: String) -> [String] {
            text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " # ").first.map(String.init) ?? "" }
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        #expect(settings(reread.standardOutput) == settings(output), "\(reread.standardOutput)")
        #expect(reread.standardError.isEmpty, "\(reread.standardError)")

        try "[network]\nport = -1\n".write(toFile: home + "/intercom/config.toml", atomically: true, encoding: .utf8)
        let failing = try ChildProcess(ChildProcess.intercomPath, ["--duration", "1"], environment: ["XDG_CONFIG_HOME": home])
        #expect(failing.wait(seconds: 10) != 0)
        #expect(failing.standardError.contains("config.toml:2: network.port"), "\(failing.standardError)")
    }

    /// `--config FILE` replaces the default file for every command that reads one; each toggle
    /// can be turned both ways on the command line, over what the file says.
    @Test func aGivenFileReplacesTheDefaultAndTheCommandLineWinsBothWays() throws {
        let home = temporaryPath("xdg-default")
        try FileManager.default.createDirectory(atPath: home + "/intercom", withIntermediateDirectories: true)
        try "[network]\nport = 6001\n".write(toFile: home + "/intercom/config.toml", atomically: true, encoding: .utf8)
        let given = temporaryPath("given.toml")
        try "[audio]\ndtx = true\naec = false\n\n[network]\npeers = [\"10.0.0.2:5004\"]\n".write(toFile: given, atomically: true, encoding: .utf8)
        func show(_ arguments: [String]) throws -> (status: Int32?, lines: [String], errors: String) {
            let process = try ChildProcess(ChildProcess.intercomPath, ["config"] + arguments, environment: ["XDG_CONFIG_HOME": home])
            let status = process.wait(seconds: 10)
            return (status, process.standardOutput.split(separator: "\n").map(String.init), process.standardError)
        }
        func line(_ lines: [String], _ prefix: String) -> String { lines.first { $0.hasPrefix(prefix) } ?? "(none)" }

        let fromFile = try show(["--config", given])
        #expect(fromFile.status == 0, "\(fromFile.errors)")
        #expect(line(fromFile.lines, "port = ").hasPrefix("port = 5004 "), "the default file is not read: \(fromFile.lines)")
        #expect(line(fromFile.lines, "dtx = ").hasPrefix("dtx = true ") && line(fromFile.lines, "dtx = ").hasSuffix("given.toml:2"))

        let overridden = try show(["--config", given, "--no-dtx", "--aec", "--peer", "10.0.0.3:5004"])
        #expect(line(overridden.lines, "dtx = ").hasPrefix("dtx = false ") && line(overridden.lines, "dtx = ").hasSuffix("# command line"))
        #expect(line(overridden.lines, "aec = ").hasPrefix("aec = true "))
        #expect(line(overridden.lines, "peers = ").hasPrefix(#"peers = ["10.0.0.3:5004"]"#), "command-line peers replace the file's")

        let missing = try show(["--config", temporaryPath("absent.toml")])
        #expect(missing.status == 66 && missing.errors.contains("absent.toml") && !missing.errors.contains("Usage:"), "\(missing)")
    }

    /// Every setting of the schema is one the command line, the file and `intercom config` all
    /// know: a file giving each its example makes `config` show that value from the file's
    /// line, and each option is in the help with its help text. (A setting in the schema that
    /// no option group took would show its default, from nowhere.)
    @Test func everySettingOfTheSchemaReachesTheCommandLineTheFileAndConfig() throws {
        var text = ""
        var lines: [String: Int] = [:]
        for table in ["audio", "network", "call", "talk"] {
            text += "[\(table)]\n"
            for setting in ConfigurationSchema.settings where setting.table == table {
                text += "\(setting.key) = \(ConfigurationText.literal(setting.example))\n"
                lines[setting.path] = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
            }
        }
        #expect(lines.count == ConfigurationSchema.settings.count, "a table is missing from this test")
        let path = temporaryPath("every.toml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let process = try ChildProcess(ChildProcess.intercomPath, ["config", "--config", path])
        #expect(process.wait(seconds: 10) == 0, "\(process.standardError)")
        let shown = process.standardOutput.split(separator: "\n").map(String.init)
        for setting in ConfigurationSchema.settings {
            let expected = "\(setting.key) = \(ConfigurationText.literal(setting.example))"
            let line = shown.first { $0.hasPrefix("\(setting.key) = ") } ?? "(none)"
            #expect(line.hasPrefix(expected + " ") && line.hasSuffix("every.toml:\(lines[setting.path]!)"), "\(setting.path): \(line)")
        }
        let help = try ChildProcess(ChildProcess.intercomPath, ["config", "--help"])
        #expect(help.wait(seconds: 10) == 0)
        let helpText = help.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for setting in ConfigurationSchema.settings {
            #expect(helpText.contains("--\(setting.option)"), "--\(setting.option) is not on the command line")
            let firstWords = setting.help.split(separator: " ").prefix(4).joined(separator: " ")
            #expect(helpText.contains(firstWords), "--\(setting.option)'s help: \(firstWords)")
        }
    }
}
