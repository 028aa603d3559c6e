extension ArraySlice<UInt8> {
    /// Whether `text` is what `String(decoding: self, as: UTF8.self)` makes of these bytes (each
    /// ill-formed sequence one U+FFFD), found without making that string.
    public func decodes(to text: String) -> Bool {
        var decoder = UTF8()
        var bytes = makeIterator()
        var scalars = text.unicodeScalars.makeIterator()
        while true {
            switch decoder.decode(&bytes) {
            case .scalarValue(let scalar):
                guard scalars.next() == scalar else { return false }
            case .error:
                guard scalars.next() == "\u{FFFD}" else { return false }
            case .emptyInput:
                return scalars.next() == nil
            }
        }
    }
}
