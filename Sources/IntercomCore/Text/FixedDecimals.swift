extension Double {
    /// The value with exactly `digits` digits after the point, rounded half away from zero, as
    /// C's "%.Nf" writes it ("nan", "inf" and "-inf" for the values that have no digits).
    public func fixed(_ digits: Int) -> String {
        guard isFinite else { return isNaN ? "nan" : self < 0 ? "-inf" : "inf" }
        var scale: Double = 1
        for _ in 0..<max(digits, 0) { scale *= 10 }
        let scaled = (magnitude * scale).rounded(.toNearestOrAwayFromZero)
        // Beyond 2^63 the digits are no longer those of an integer; such values are not shown here.
        guard scaled < 9.2e18 else { return "\(self)" }
        let units = UInt64(scaled)
        let whole = units / UInt64(scale)
        let sign = self < 0 && units > 0 ? "-" : ""
        guard digits > 0 else { return "\(sign)\(whole)" }
        let fraction = String(units % UInt64(scale))
        return "\(sign)\(whole)." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
}
