import Foundation
import IntercomCall
import Testing
import TestSupport

@Suite struct ConfigurationFileTests {
    @Test func settingsBecomeArgumentsThatFlagsCanOverride() throws {
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
        #expect(file.arguments == [
            "--no-aec", "--frame-ms", "20",
            "--no-discovery", "--peer", "10.0.0.2:5004", "--peer", "[::1]:5004", "--port", "6001",
            "--mode", "vox", "--ptt-max-seconds", "30.0",
        ])
        #expect(file.entries.first { $0.setting.path == "network.port" }?.line == 2)
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

    @Test func unknownKeysAreWarnedAboutWithTheirLine() throws {
        let file = try ConfigurationFile.parse("[network]\nport = 1\ncolour = \"blue\"\n\n[extras]\nx = 1\n", path: "c.toml")
        #expect(file.warnings.sorted() == ["c.toml:3: unknown key 'network.colour' (ignored)", "c.toml:5: unknown key 'extras' (ignored)"])
        #expect(file.arguments == ["--port", "1"])
    }

    @Test func theCommandShowsWhereEachValueCameFrom() throws {
        let home = temporaryPath("xdg")
        try FileManager.default.createDirectory(atPath: home + "/intercom", withIntermediateDirectories: true)
        try "[network]\nport = 6001\n\n[talk]\nmode = \"vox\"\nloudness = 3\n".write(toFile: home + "/intercom/config.toml", atomically: true, encoding: .utf8)
        let process = try ChildProcess(ChildProcess.intercomPath, ["config", "--mode", "open"], environment: ["XDG_CONFIG_HOME": home])
        #expect(process.wait(seconds: 10) == 0, "\(process.standardError)")
        let output = process.standardOutput
        #expect(output.contains("port = 6001") && output.contains("config.toml:2"), "\(output)")
        #expect(output.split(separator: "\n").contains { $0.hasPrefix("mode = open") && $0.hasSuffix("# command line") }, "\(output)")
        #expect(output.contains("unknown key 'talk.loudness'"), "\(output)")

        try "[network]\nport = -1\n".write(toFile: home + "/intercom/config.toml", atomically: true, encoding: .utf8)
        let failing = try ChildProcess(ChildProcess.intercomPath, ["--duration", "1"], environment: ["XDG_CONFIG_HOME": home])
        #expect(failing.wait(seconds: 10) != 0)
        #expect(failing.standardError.contains("config.toml:2: network.port"), "\(failing.standardError)")
    }
}
