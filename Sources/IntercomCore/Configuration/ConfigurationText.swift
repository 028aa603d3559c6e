/// The configuration file's syntax: the part of TOML 1.0 that a configuration of tables of
/// settings needs, read strictly and with bounds. Tables (`[audio]`), `key = value` with basic
/// or literal strings, integers, floats, booleans and arrays of these (over several lines if
/// need be), comments. Anything else TOML allows (dotted keys, inline tables, arrays of
/// tables, multi-line strings, dates) is refused with its line, as is anything TOML forbids.
///
/// A reader of our own, not a general TOML library: the one we used (toml++ 3 through TOMLKit)
/// aborted, or in a release build had undefined behaviour, on some malformed headers and
/// values that fuzzing found, and leaked on every parse.
public enum ConfigurationText {
    public indirect enum Value: Equatable, Sendable {
        case string(String)
        case integer(Int)
        case float(Double)
        case boolean(Bool)
        case array([Value])
    }

    /// One `key = value`, with the table it stands in ("" before any table) and its line.
    public struct Entry: Equatable, Sendable {
        public let table: String
        public let key: String
        public let value: Value
        public let line: Int
    }

    public struct SyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// Files larger than this are refused: a configuration is a few hundred bytes.
    public static let maximumBytes = 65_536
    /// Arrays nested deeper than this are refused (the reader recurses into them).
    public static let maximumNesting = 8

    /// Reads every entry, in file order.
    public static func parse(_ text: String) throws(SyntaxError) -> [Entry] {
        guard text.utf8.count <= maximumBytes else { throw SyntaxError(line: 1, message: "larger than \(maximumBytes) bytes") }
        var reader = Reader(Array(text.unicodeScalars))
        return try reader.entries()
    }

    /// `value` written as TOML, so that reading it back gives `value`.
    public static func literal(_ value: Value) -> String {
        switch value {
        case .string(let text): quoted(text)
        case .integer(let number): "\(number)"
        case .float(let number):
            number.isNaN ? "nan" : number.isInfinite ? (number < 0 ? "-inf" : "inf")
                : number == number.rounded() && abs(number) < 1e15 ? "\(Int(number)).0" : "\(number)"
        case .boolean(let flag): flag ? "true" : "false"
        case .array(let items): "[" + items.map(literal).joined(separator: ", ") + "]"
        }
    }

    /// A basic string, with every character that needs it escaped.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    private struct Reader {
        let scalars: [Unicode.Scalar]
        var position = 0
        var line = 1

        init(_ scalars: [Unicode.Scalar]) {
            self.scalars = scalars
            if scalars.first == "\u{FEFF}" { position = 1 }
        }

        var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

        func fail(_ message: String) -> SyntaxError { SyntaxError(line: line, message: message) }

        mutating func advance() {
            if current == "\n" { line += 1 }
            position += 1
        }

        mutating func skipSpaces() {
            while current == " " || current == "\t" { advance() }
        }

        /// Spaces, then a comment, then the end of the line (or of the file).
        mutating func endOfLine() throws(SyntaxError) {
            skipSpaces()
            if current == "#" { try comment() }
            if current == "\r" { advance() }
            guard current == nil || current == "\n" else { throw fail("expected the end of the line, found \(shown(current!))") }
            advance()
        }

        mutating func comment() throws(SyntaxError) {
            while let scalar = current, scalar != "\n" {
                if scalar.value < 0x20 && scalar != "\t" && scalar != "\r" || scalar.value == 0x7F {
                    throw fail("a control character in a comment")
                }
                advance()
            }
        }

        mutating func entries() throws(SyntaxError) -> [Entry] {
            var entries: [Entry] = []
            var table = ""
            var seenTables: Set<String> = [""]
            var seenKeys: Set<[String]> = []
            while current != nil {
                skipSpaces()
                switch current {
                case nil: break
                case "\n", "\r", "#": try endOfLine()
                case "[":
                    advance()
                    guard current != "[" else { throw fail("arrays of tables ([[…]]) are not used") }
                    skipSpaces()
                    let name = try key()
                    skipSpaces()
                    guard current == "]" else { throw fail("a table name is one key, closed by ']'") }
                    advance()
                    guard seenTables.insert(name).inserted else { throw fail("table [\(shownText(name))] appears twice") }
                    table = name
                    try endOfLine()
                default:
                    let keyLine = line
                    let name = try key()
                    skipSpaces()
                    guard current == "=" else { throw fail("expected '=' after the key (dotted keys are not used)") }
                    advance()
                    skipSpaces()
                    let value = try self.value(depth: 0)
                    guard seenKeys.insert([table, name]).inserted else { throw fail("key \(shownText(name)) appears twice") }
                    entries.append(Entry(table: table, key: name, value: value, line: keyLine))
                    try endOfLine()
                }
            }
            return entries
        }

        /// A bare key (letters, digits, '-', '_') or a quoted one.
        mutating func key() throws(SyntaxError) -> String {
            switch current {
            case "\"": return try basicString()
            case "'": return try literalString()
            default:
                var name = ""
                while let scalar = current, scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_" {
                    name.unicodeScalars.append(scalar)
                    advance()
                }
                guard !name.isEmpty else { throw fail(current.map { "expected a key, found \(shown($0))" } ?? "expected a key") }
                return name
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) -> Value {
            switch current {
            case "\"": return .string(try basicString())
            case "'": return .string(try literalString())
            case "[": return .array(try array(depth: depth + 1))
            case "{": throw fail("inline tables are not used")
            case nil, "\n", "\r": throw fail("a key has no value")
            default: return try word()
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> [Value] {
            guard depth <= maximumNesting else { throw fail("arrays nested deeper than \(maximumNesting)") }
            advance()
            var items: [Value] = []
            while true {
                try skipBlank()
                if current == "]" { break }
                items.append(try value(depth: depth))
                try skipBlank()
                if current == "," { advance(); continue }
                guard current == "]" else { throw fail("expected ',' or ']' in an array") }
                break
            }
            advance()
            return items
        }

        /// Inside an array: spaces, line breaks and comments.
        mutating func skipBlank() throws(SyntaxError) {
            while true {
                skipSpaces()
                switch current {
                case "\n", "\r": advance()
                case "#": try comment()
                case nil: throw fail("an array is not closed")
                default: return
                }
            }
        }

        mutating func basicString() throws(SyntaxError) -> String { try string(closedBy: "\"", escapes: true) }
        mutating func literalString() throws(SyntaxError) -> String { try string(closedBy: "'", escapes: false) }

        /// A string on one line: basic ones ("…") read escapes, literal ones ('…') do not.
        mutating func string(closedBy quote: Unicode.Scalar, escapes: Bool) throws(SyntaxError) -> String {
            advance()
            guard !(current == quote && position + 1 < scalars.count && scalars[position + 1] == quote) else {
                throw fail("multi-line strings are not used")
            }
            var text = ""
            while true {
                guard let scalar = current, scalar != "\n" else { throw fail("a string is not closed on its line") }
                advance()
                switch scalar {
                case quote: return text
                case "\\" where escapes: text.unicodeScalars.append(try escape())
                case _ where scalar.value < 0x20 && scalar != "\t" || scalar.value == 0x7F:
                    throw fail("a control character in a string" + (escapes ? " (write it as an escape)" : ""))
                default: text.unicodeScalars.append(scalar)
                }
            }
        }

        mutating func escape() throws(SyntaxError) -> Unicode.Scalar {
            guard let scalar = current else { throw fail("a string is not closed") }
            advance()
            switch scalar {
            case "b": return "\u{08}"
            case "t": return "\t"
            case "n": return "\n"
            case "f": return "\u{0C}"
            case "r": return "\r"
            case "\"": return "\""
            case "\\": return "\\"
            case "u", "U":
                var digits = ""
                for _ in 0..<(scalar == "u" ? 4 : 8) {
                    guard let digit = current, digit.properties.isASCIIHexDigit else { throw fail("\\\(scalar) needs \(scalar == "u" ? 4 : 8) hexadecimal digits") }
                    digits.unicodeScalars.append(digit)
                    advance()
                }
                guard let code = UInt32(digits, radix: 16), let escaped = Unicode.Scalar(code) else { throw fail("\\\(scalar)\(digits) is not a Unicode scalar") }
                return escaped
            default: throw fail("unknown escape \\\(shown(scalar))")
            }
        }

        /// A boolean or a number: the characters up to a separator.
        mutating func word() throws(SyntaxError) -> Value {
            var word = ""
            while let scalar = current, !" \t\r\n,]#".unicodeScalars.contains(scalar) {
                word.unicodeScalars.append(scalar)
                advance()
                guard word.unicodeScalars.count <= 64 else { throw fail("a value too long to be a number") }
            }
            if word == "true" { return .boolean(true) }
            if word == "false" { return .boolean(false) }
            if let number = Self.integer(word) { return .integer(number) }
            if let number = Self.float(word) { return .float(number) }
            throw fail("\(shownText(word)) is not a string, number, boolean or array (strings are quoted)")
        }

        static func integer(_ word: String) -> Int? {
            for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where word.hasPrefix(prefix) {
                let digits = word.dropFirst(2)
                guard underscoresBetweenDigits(digits) else { return nil }
                return Int(digits.replacing("_", with: ""), radix: radix)
            }
            let unsigned = word.first == "+" || word.first == "-" ? word.dropFirst() : word[...]
            guard underscoresBetweenDigits(unsigned), unsigned.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "_") }),
                  unsigned == "0" || unsigned.first != "0" else { return nil }
            return Int(word.replacing("_", with: ""))
        }

        static func float(_ word: String) -> Double? {
            let unsigned = word.first == "+" || word.first == "-" ? word.dropFirst() : word[...]
            if unsigned == "inf" || unsigned == "nan" {
                let magnitude = unsigned == "inf" ? Double.infinity : Double.nan
                return word.first == "-" ? -magnitude : magnitude
            }
            // Digits with an optional fraction and exponent; each part starts with a digit.
            let parts = unsigned.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "e" || $0 == "E" })
            guard (1...2).contains(parts.count) else { return nil }
            let mantissa = parts[0].split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(mantissa.count), mantissa.count == 2 || parts.count == 2,
                  mantissa.allSatisfy(decimalDigits), mantissa[0] == "0" || mantissa[0].first != "0" else { return nil }
            if parts.count == 2 {
                let exponent = parts[1].first == "+" || parts[1].first == "-" ? parts[1].dropFirst() : parts[1]
                guard decimalDigits(exponent) else { return nil }
            }
            return Double(word.replacing("_", with: ""))
        }

        static func decimalDigits(_ text: Substring) -> Bool {
            underscoresBetweenDigits(text) && text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "_") }
        }

        static func underscoresBetweenDigits(_ text: Substring) -> Bool {
            !text.isEmpty && text.first != "_" && text.last != "_" && !text.contains("__")
        }

        func shown(_ scalar: Unicode.Scalar) -> String { shownText(String(scalar)) }
        func shownText(_ text: String) -> String { "'" + TerminalText.sanitized(text.prefix(40)) + "'" }
    }
}
