extension StringProtocol {
    /// The text without the spaces, tabs and line breaks at either end.
    public func trimmingWhitespace() -> String {
        let kept = drop { $0.isWhitespace }
        return String(kept.reversed().drop { $0.isWhitespace }.reversed())
    }

    /// The text with spaces added at its end up to `width` characters; longer text is kept whole.
    public func padded(to width: Int) -> String {
        String(self) + String(repeating: " ", count: Swift.max(0, width - count))
    }
}
