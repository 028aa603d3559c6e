@testable import IntercomCore
import Testing

@Suite("Impairment profiles")
struct ImpairmentProfileTests {
    @Test func parsesEveryKey() throws {
        let profile = try ImpairmentProfile.parse("loss=10,jitter=15ms,delay=30ms,burst=5:3,reorder=1,dup=1,skew=-50ppm,seed=42")
        #expect(profile == ImpairmentProfile(
            lossPercent: 10, burstLoss: BurstLoss(lossPercent: 5, meanBurstLength: 3),
            baseDelayNanoseconds: 30_000_000, jitterNanoseconds: 15_000_000,
            reorderPercent: 1, duplicatePercent: 1, clockSkewPPM: -50, seed: 42))
    }

    @Test func acceptsUnitsAndSpaces() throws {
        let profile = try ImpairmentProfile.parse(" loss=2.5% , delay=0.1s, jitter=500us ,skew=20 ")
        #expect(profile.lossPercent == 2.5)
        #expect(profile.baseDelayNanoseconds == 100_000_000)
        #expect(profile.jitterNanoseconds == 500_000)
        #expect(profile.clockSkewPPM == 20)
        #expect(try ImpairmentProfile.parse("delay=7").baseDelayNanoseconds == 7_000_000)
        #expect(try ImpairmentProfile.parse("delay=250ns").baseDelayNanoseconds == 250)
    }

    @Test func buildsOnAPreset() throws {
        var expected = ImpairmentProfile.wifi
        expected.seed = 7
        #expect(try ImpairmentProfile.parse("wifi,seed=7") == expected)
        #expect(try ImpairmentProfile.parse("loss10-jitter30") == .loss10Jitter30)
    }

    @Test func presetsHaveTheDocumentedNumbers() {
        #expect(ImpairmentProfile.lan.baseDelayNanoseconds == 1_000_000)
        #expect(ImpairmentProfile.lan.jitterNanoseconds == 500_000)
        #expect(ImpairmentProfile.wifi == ImpairmentProfile(
            lossPercent: 1, baseDelayNanoseconds: 5_000_000, jitterNanoseconds: 10_000_000))
        #expect(ImpairmentProfile.loss5.lossPercent == 5)
        #expect(ImpairmentProfile.loss10Jitter30 == ImpairmentProfile(
            lossPercent: 10, baseDelayNanoseconds: 30_000_000, jitterNanoseconds: 15_000_000))
        #expect(ImpairmentProfile.bursty.burstLoss == BurstLoss(lossPercent: 5, meanBurstLength: 3))
        #expect(ImpairmentProfile.presets.map(\.name) == ["clean", "lan", "wifi", "loss5", "loss10-jitter30", "bursty"])
    }

    @Test(arguments: ImpairmentProfile.presets.map(\.profile) + [
        ImpairmentProfile(lossPercent: 0.25, burstLoss: BurstLoss(lossPercent: 2.5, meanBurstLength: 1.5),
                          baseDelayNanoseconds: 1_500_000, jitterNanoseconds: 1_234, reorderPercent: 3,
                          duplicatePercent: 0.5, clockSkewPPM: -12.5, seed: .max),
    ])
    func descriptionParsesBack(profile: ImpairmentProfile) throws {
        #expect(try ImpairmentProfile.parse(profile.description) == profile, "\(profile)")
    }

    @Test func describesItselfReadably() {
        #expect(ImpairmentProfile.loss10Jitter30.description == "loss=10,delay=30ms,jitter=15ms,seed=1")
        #expect(ImpairmentProfile.clean.description == "clean,seed=1")
    }

    @Test(arguments: [
        ("", ImpairmentProfileParseError.empty),
        ("lossy", .unknownPreset("lossy")),
        ("loss=5,wifi", .presetNotFirst("wifi")),
        ("los=5", .unknownKey("los")),
        ("loss=5,loss=6", .repeatedKey("loss")),
        ("loss=abc", .badValue(key: "loss", value: "abc", expected: "a percentage from 0 to 100")),
        ("loss=101", .badValue(key: "loss", value: "101", expected: "a percentage from 0 to 100")),
        ("delay=-5ms", .badValue(key: "delay", value: "-5ms",
                                 expected: "a duration such as 30ms, 500us or 0.1s, below one hour")),
        ("jitter=2h", .badValue(key: "jitter", value: "2h",
                                expected: "a duration such as 30ms, 500us or 0.1s, below one hour")),
        ("seed=-1", .badValue(key: "seed", value: "-1", expected: "a whole number from 0 to 18446744073709551615")),
    ])
    func rejectsBadInput(text: String, expected: ImpairmentProfileParseError) {
        #expect(throws: expected) { try ImpairmentProfile.parse(text) }
    }

    @Test func rejectsImpossibleBursts() {
        for text in ["burst=90:1", "burst=5:0.5", "burst=5", "burst=100:3", "burst=5:x"] {
            #expect(throws: ImpairmentProfileParseError.self, "\(text)") { try ImpairmentProfile.parse(text) }
        }
    }

    @Test func errorMessagesNameTheProblem() {
        #expect(ImpairmentProfileParseError.badValue(key: "loss", value: "abc", expected: "a percentage from 0 to 100")
            .description == "bad impairment 'loss=abc': expected a percentage from 0 to 100")
        #expect(ImpairmentProfileParseError.unknownPreset("lossy").description
            == "unknown impairment preset 'lossy': the presets are clean, lan, wifi, loss5, loss10-jitter30, bursty")
    }
}
