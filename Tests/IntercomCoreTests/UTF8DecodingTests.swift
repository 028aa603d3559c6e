import IntercomCore
import Testing

/// A peer's name is compared with the one kept without decoding it again; the comparison must
/// agree with the standard library's decoding, ill-formed bytes included.
struct UTF8DecodingTests {
    @Test func agreesWithTheStandardLibrarysDecoding() {
        var random = SeededGenerator(seed: 12)
        // Mostly bytes at or above 0x80, where sequences go wrong: lone continuations, truncated
        // and overlong sequences, surrogates, bytes no UTF-8 has.
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...12, using: &random)
            let bytes = ArraySlice((0..<count).map { _ in
                random.chance(0.25) ? UInt8.random(in: 0x20...0x7F, using: &random) : UInt8.random(in: 0x80...0xFF, using: &random)
            })
            let decoded = String(decoding: bytes, as: UTF8.self)
            #expect(bytes.decodes(to: decoded), "\(Array(bytes))")
            #expect(!bytes.decodes(to: decoded + "x"), "\(Array(bytes))")
            if !decoded.isEmpty { #expect(!bytes.decodes(to: String(decoded.unicodeScalars.dropLast())), "\(Array(bytes))") }
        }
    }

    @Test func aNameThatIsNotUTF8IsNotTheSameAsAnother() {
        let bytes: ArraySlice<UInt8> = ArraySlice(Array("evil".utf8) + [0xFF, 0xC3, 0x28])
        #expect(bytes.decodes(to: "evil\u{FFFD}\u{FFFD}("))
        #expect(!bytes.decodes(to: "evil"))
        #expect(!bytes.decodes(to: "evil??("))
        #expect(ArraySlice<UInt8>().decodes(to: ""))
    }
}
