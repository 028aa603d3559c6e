/// The command-line form of an impairment profile.
///
/// Comma-separated `key=value` items, optionally starting with a preset name to build on:
/// `loss=10,jitter=15ms,delay=30ms,burst=5:3,reorder=1,dup=1,skew=50,seed=42` or `wifi,seed=7`.
/// Percentages may end in `%`; durations take `ns`, `us`, `ms` or `s` (bare numbers are
/// milliseconds); `burst` is `LOSS%:MEAN_BURST_LENGTH`; `skew` is in ppm.
extension ImpairmentProfile: CustomStringConvertible {
    /// Parses the command-line form.
    public static func parse(_ text: String) throws(ImpairmentProfileParseError) -> ImpairmentProfile {
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map { trimmed($0) }
        guard !(items.count == 1 && items[0].isEmpty) else { throw .empty }

        var profile = ImpairmentProfile.clean
        var seenKeys: Set<String> = []
        for (index, item) in items.enumerated() {
            guard let equals = item.firstIndex(of: "=") else {
                guard let preset = preset(named: item) else { throw .unknownPreset(item) }
                guard index == 0 else { throw .presetNotFirst(item) }
                profile = preset
                continue
            }
            let key = String(item[..<equals])
            let value = String(item[item.index(after: equals)...])
            guard seenKeys.insert(key).inserted else { throw .repeatedKey(key) }
            try profile.apply(key: key, value: value)
        }
        return profile
    }

    private mutating func apply(key: String, value: String) throws(ImpairmentProfileParseError) {
        let percentExpectation = "a percentage from 0 to 100"
        let durationExpectation = "a duration such as 30ms, 500us or 0.1s, below one hour"
        switch key {
        case "loss":
            lossPercent = try Self.percent(value, orThrow: .badValue(key: key, value: value, expected: percentExpectation))
        case "burst":
            burstLoss = try Self.burst(value, key: key)
        case "delay":
            baseDelayNanoseconds = try Self.duration(value, orThrow: .badValue(key: key, value: value, expected: durationExpectation))
        case "jitter":
            jitterNanoseconds = try Self.duration(value, orThrow: .badValue(key: key, value: value, expected: durationExpectation))
        case "reorder":
            reorderPercent = try Self.percent(value, orThrow: .badValue(key: key, value: value, expected: percentExpectation))
        case "dup":
            duplicatePercent = try Self.percent(value, orThrow: .badValue(key: key, value: value, expected: percentExpectation))
        case "skew":
            let number = value.hasSuffix("ppm") ? String(value.dropLast(3)) : value
            guard let ppm = Double(number), ppm.isFinite, abs(ppm) <= 100_000 else {
                throw .badValue(key: key, value: value, expected: "parts per million between -100000 and 100000")
            }
            clockSkewPPM = ppm
        case "seed":
            guard let seed = UInt64(value) else {
                throw .badValue(key: key, value: value, expected: "a whole number from 0 to \(UInt64.max)")
            }
            self.seed = seed
        default:
            throw .unknownKey(key)
        }
    }

    private static func percent(_ text: String, orThrow failure: ImpairmentProfileParseError) throws(ImpairmentProfileParseError) -> Double {
        let number = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let value = Double(number), (0...100).contains(value) else { throw failure }
        return value
    }

    private static func duration(_ text: String, orThrow failure: ImpairmentProfileParseError) throws(ImpairmentProfileParseError) -> UInt64 {
        let units: [(suffix: String, nanoseconds: Double)] = [
            ("ns", 1), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000),
        ]
        let unit = units.first { text.hasSuffix($0.suffix) }
        let number = String(text.dropLast(unit?.suffix.count ?? 0))
        let oneHour = 3_600_000_000_000.0
        guard let value = Double(number), value >= 0 else { throw failure }
        let nanoseconds = (value * (unit?.nanoseconds ?? 1_000_000)).rounded()
        guard nanoseconds < oneHour else { throw failure }
        return UInt64(nanoseconds)
    }

    private static func burst(_ text: String, key: String) throws(ImpairmentProfileParseError) -> BurstLoss {
        let failure = ImpairmentProfileParseError.badValue(
            key: key, value: text,
            expected: "LOSS%:MEAN_BURST_LENGTH with loss below 100 and a mean burst length of at least 1 that the loss allows")
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let length = Double(parts[1]) else { throw failure }
        let burst = BurstLoss(lossPercent: try percent(String(parts[0]), orThrow: failure), meanBurstLength: length)
        guard burst.isAchievable else { throw failure }
        return burst
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    /// The command-line form, which `parse` reads back to an equal profile.
    public var description: String {
        var items: [String] = []
        if lossPercent != 0 { items.append("loss=\(Self.format(lossPercent))") }
        if let burstLoss {
            items.append("burst=\(Self.format(burstLoss.lossPercent)):\(Self.format(burstLoss.meanBurstLength))")
        }
        if baseDelayNanoseconds != 0 { items.append("delay=\(Self.format(nanoseconds: baseDelayNanoseconds))") }
        if jitterNanoseconds != 0 { items.append("jitter=\(Self.format(nanoseconds: jitterNanoseconds))") }
        if reorderPercent != 0 { items.append("reorder=\(Self.format(reorderPercent))") }
        if duplicatePercent != 0 { items.append("dup=\(Self.format(duplicatePercent))") }
        if clockSkewPPM != 0 { items.append("skew=\(Self.format(clockSkewPPM))") }
        if items.isEmpty { items.append("clean") }
        items.append("seed=\(seed)")
        return items.joined(separator: ",")
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    private static func format(nanoseconds: UInt64) -> String {
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000)ms" }
        if nanoseconds % 1_000 == 0 { return "\(nanoseconds / 1_000)us" }
        return "\(nanoseconds)ns"
    }
}

/// Why a command-line impairment profile was rejected.
public enum ImpairmentProfileParseError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case unknownPreset(String)
    case presetNotFirst(String)
    case unknownKey(String)
    case repeatedKey(String)
    case badValue(key: String, value: String, expected: String)

    private static let keys = "loss, burst, delay, jitter, reorder, dup, skew, seed"
    private static var presetNames: String { ImpairmentProfile.presets.map(\.name).joined(separator: ", ") }

    public var description: String {
        switch self {
        case .empty:
            "empty impairment profile: give a preset (\(Self.presetNames)) or key=value items (\(Self.keys))"
        case .unknownPreset(let name):
            "unknown impairment preset '\(name)': the presets are \(Self.presetNames)"
        case .presetNotFirst(let name):
            "impairment preset '\(name)' must come first, before key=value items"
        case .unknownKey(let key):
            "unknown impairment key '\(key)': the keys are \(Self.keys)"
        case .repeatedKey(let key):
            "impairment key '\(key)' is given twice"
        case .badValue(let key, let value, let expected):
            "bad impairment '\(key)=\(value)': expected \(expected)"
        }
    }
}
