import IntercomCore
import Testing

@Suite("Remote text on a terminal")
struct TerminalTextTests {
    @Test(arguments: [
        ("plain name", "plain name"),
        ("evil\u{1B}[2J\u{1B}]0;owned\u{07}", "evil\u{FFFD}[2J\u{FFFD}]0;owned\u{FFFD}"),
        ("c1\u{9B}31m", "c1\u{FFFD}31m"),
        ("del\u{7F}", "del\u{FFFD}"),
        ("bob\u{202E}kcab", "bob\u{FFFD}kcab"),
        ("iso\u{2066}late\u{2069}", "iso\u{FFFD}late\u{FFFD}"),
        ("new\nline\ttab", "new\u{FFFD}line\u{FFFD}tab"),
        ("café ☕ 日本", "café ☕ 日本"),
    ])
    func controlAndBidiCharactersAreReplaced(input: String, expected: String) {
        #expect(TerminalText.sanitized(input) == expected)
    }

    @Test func invalidUTF8IsReplacedAndLengthCapped() {
        #expect(TerminalText.sanitized(bytes: [0x61, 0xFF, 0xC3, 0x62]) == "a\u{FFFD}\u{FFFD}b")
        let long = String(repeating: "x", count: 500)
        #expect(TerminalText.sanitized(long).unicodeScalars.count == TerminalText.defaultLimit + 1)
        #expect(TerminalText.sanitized(long).hasSuffix("…"))
    }
}
