import IntercomCore
import Testing

@Suite("Configuration text: a strict subset of TOML")
struct ConfigurationTextTests {
    typealias Value = ConfigurationText.Value

    @Test func tablesKeysAndEveryKindOfValueWithTheirLines() throws {
        let entries = try ConfigurationText.parse("""
            \u{FEFF}# intercom
            top = 1
            [audio]   # the sound card
            capture = "hw:1" # USB
            'buffer-ms' = 1_000
            gain = -2.5e-1
            aec = false
            [network]
            "peers" = [
              "a:1",  # first
              'b:2',
            ]
            hex = 0xff
            big = +inf
            nested = [[1, 2], []]
            escaped = "tab\\there \\"q\\" \\u00e9 \\U0001F600"
            """)
        #expect(entries.map { "\($0.table).\($0.key)@\($0.line)" } == [
            ".top@2", "audio.capture@4", "audio.buffer-ms@5", "audio.gain@6", "audio.aec@7", "network.peers@9",
            "network.hex@13", "network.big@14", "network.nested@15", "network.escaped@16",
        ])
        #expect(entries.map(\.value) == [
            .integer(1), .string("hw:1"), .integer(1000), .float(-0.25), .boolean(false), .array([.string("a:1"), .string("b:2")]),
            .integer(255), .float(.infinity), .array([.array([.integer(1), .integer(2)]), .array([])]),
            .string("tab\there \"q\" é 😀"),
        ])
    }

    static let refused: [(text: String, line: Int, mentions: String)] = [
        ("[a]\n[a]\n", 2, "twice"),
        ("a = 1\na = 2\n", 2, "twice"),
        ("a.b = 1\n", 1, "dotted"),
        ("a = {b = 1}\n", 1, "inline tables"),
        ("[[a]]\n", 1, "arrays of tables"),
        ("a = \"\"\"x\"\"\"\n", 1, "multi-line"),
        ("a = 1979-05-27\n", 1, "not a string"),
        ("a = \"open\n", 1, "not closed"),
        ("a = [1,\n2\n", 3, "not closed"),
        ("a = 01\n", 1, "not a string"),
        ("a = 1__0\n", 1, "not a string"),
        ("a = \"\\q\"\n", 1, "escape"),
        ("a = \"\\uD800\"\n", 1, "not a Unicode scalar"),
        ("a = \"bell\u{07}\"\n", 1, "control character"),
        ("[é]\n", 1, "expected a key"),
        ("a = 1 b = 2\n", 1, "end of the line"),
        ("a =\n", 1, "no value"),
        ("a = " + String(repeating: "[", count: 20) + "\n", 1, "nested deeper"),
        ("a = 99999999999999999999\n", 1, "not a string"),
    ]

    @Test(arguments: refused)
    func anythingElseIsRefusedWithItsLine(case: (text: String, line: Int, mentions: String)) {
        #expect {
            _ = try ConfigurationText.parse(`case`.text)
        } throws: { error in
            guard let error = error as? ConfigurationText.SyntaxError else { return false }
            return error.line == `case`.line && error.message.contains(`case`.mentions)
        }
    }

    @Test func namesInMessagesAreSafeToPrint() {
        #expect {
            _ = try ConfigurationText.parse("a = \u{1B}[2J\n")
        } throws: { error in
            !"\(error)".unicodeScalars.contains { $0.value < 0x20 }
        }
    }

    @Test(arguments: [
        Value.string("a \"b\" \\ \n\t\u{01}\u{7F} é"), .integer(-42), .float(0.1), .float(3), .float(-.infinity),
        .boolean(true), .array([.string("x"), .array([.integer(1)])]),
    ])
    func everyValueWrittenReadsBackTheSame(value: Value) throws {
        let entries = try ConfigurationText.parse("v = \(ConfigurationText.literal(value))\n")
        #expect(entries.first?.value == value)
    }
}
