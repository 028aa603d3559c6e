import IntercomCore
import Testing

@Suite struct TerminalInputParserTests {
    typealias Event = TerminalInputParser.Event

    static let rows: [(name: String, bytes: String, events: [Event])] = [
        ("plain characters", "t q", [
            .key(.character("t"), modifiers: [], type: .press), .key(.character(" "), modifiers: [], type: .press),
            .key(.character("q"), modifiers: [], type: .press),
        ]),
        ("kitty press, repeat, release of space", "\u{1B}[32u\u{1B}[32;1:2u\u{1B}[32;1:3u", [
            .key(.character(" "), modifiers: [], type: .press), .key(.character(" "), modifiers: [], type: .repeat),
            .key(.character(" "), modifiers: [], type: .release),
        ]),
        ("kitty with modifiers", "\u{1B}[116;5u\u{1B}[116;5:3u", [
            .key(.character("t"), modifiers: .control, type: .press), .key(.character("t"), modifiers: .control, type: .release),
        ]),
        ("kitty arrow release", "\u{1B}[1;1:3A", [.key(.up, modifiers: [], type: .release)]),
        ("support reply", "\u{1B}[?3u", [.keyboardProtocolSupported(flags: 3)]),
        ("device attributes are skipped", "\u{1B}[?62;22c", []),
        ("enter and escape", "\r\u{1B}[27u", [.key(.enter, modifiers: [], type: .press), .key(.escape, modifiers: [], type: .press)]),
        ("UTF-8", "é", [.key(.character("é"), modifiers: [], type: .press)]),
    ]

    @Test(arguments: rows)
    func parsesRawBytes(row: (name: String, bytes: String, events: [Event])) {
        var parser = TerminalInputParser()
        #expect(parser.feed(Array(row.bytes.utf8)) == row.events, "\(row.name)")
    }

    @Test(arguments: rows)
    func parsesTheSameBytesSplitAnywhere(row: (name: String, bytes: String, events: [Event])) {
        let bytes = Array(row.bytes.utf8)
        for split in 0...bytes.count {
            var parser = TerminalInputParser()
            let events = parser.feed(bytes[..<split]) + parser.feed(bytes[split...])
            #expect(events == row.events, "\(row.name) split at \(split)")
        }
    }

    @Test func aLoneEscapeIsAKeyOnceNothingFollows() {
        var parser = TerminalInputParser()
        #expect(parser.feed([0x1B]).isEmpty)
        #expect(parser.flushLoneEscape() == [.key(.escape, modifiers: [], type: .press)])
    }

    @Test func garbageNeverCrashes() {
        var parser = TerminalInputParser()
        var state: UInt64 = 12345
        for _ in 0..<20_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            _ = parser.feed([UInt8(truncatingIfNeeded: state >> 33)])
        }
        #expect(parser.pendingByteCount <= 66)
        // An introducer that never ends does not hold input back for good.
        var stuck = TerminalInputParser()
        _ = stuck.feed(Array("\u{1B}[".utf8) + [UInt8](repeating: UInt8(ascii: "1"), count: 100))
        #expect(stuck.feed(Array("x".utf8)).contains(.key(.character("x"), modifiers: [], type: .press)))
    }
}
