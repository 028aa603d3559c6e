import IntercomCore
import Testing

/// Numbers and columns as the status screen, `intercom peers` and `intercom config` print them.
struct PlainTextTests {
    @Test(arguments: [
        (0.0, 1, "0.0"), (12.345, 1, "12.3"), (12.35, 1, "12.4"), (-3.25, 1, "-3.3"), (-0.04, 1, "0.0"),
        (0.9996, 3, "1.000"), (0.0123, 3, "0.012"), (-42.5, 0, "-43"), (7.0, 0, "7"), (1e-5, 2, "0.00"),
        (Double.nan, 1, "nan"), (Double.infinity, 1, "inf"), (-Double.infinity, 0, "-inf"),
    ])
    func fixedDecimalsAsPrintfWritesThem(value: Double, digits: Int, expected: String) {
        #expect(value.fixed(digits) == expected)
    }

    @Test func whitespaceIsTrimmedAtBothEndsOnly() {
        #expect("  a b \n\t".trimmingWhitespace() == "a b")
        #expect(" \n ".trimmingWhitespace() == "")
        #expect("ab".trimmingWhitespace() == "ab")
    }

    @Test func paddingFillsTheColumnAndKeepsLongerText() {
        #expect("ab".padded(to: 4) == "ab  ")
        #expect("abcdef".padded(to: 4) == "abcdef")
    }
}
