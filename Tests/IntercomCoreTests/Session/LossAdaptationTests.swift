import IntercomCore
import Testing

@Suite struct LossAdaptationTests {
    @Test func followsReportedLossUpAtOnceAndDownSlowly() {
        var adaptation = LossAdaptation(initialPercent: 2)
        // A clean link: the floor of the range.
        #expect(adaptation.reported(fractionLost: 0) == 1)
        #expect(adaptation.reported(fractionLost: 0) == nil)
        // A lossy link: protection rises with the first report.
        #expect(adaptation.reported(fractionLost: 0.10) == 14)
        // Loss stops: protection stays for a while, then steps down.
        var settings: [Int] = []
        for _ in 0..<20 { if let new = adaptation.reported(fractionLost: 0) { settings.append(new) } }
        #expect(settings.first.map { $0 < 14 } == true)
        #expect(settings == settings.sorted(by: >))
        #expect(adaptation.expectedLossPercent == 1)
    }

    @Test func staysWithinItsRange() {
        var adaptation = LossAdaptation(initialPercent: 2, range: 1...30)
        _ = adaptation.reported(fractionLost: 0.9)
        #expect(adaptation.expectedLossPercent == 30)
    }
}
