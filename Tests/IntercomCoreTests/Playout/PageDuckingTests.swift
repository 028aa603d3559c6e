import Glibc
import IntercomCore
import Testing

/// The others' gain under a page, period by period on a virtual clock.
@Suite struct PageDuckingTests {
    /// Runs 5 ms periods; `sounding(t)` says whether the page sounded in the period at `t` ms.
    static func run(milliseconds: Int, _ sounding: (Int) -> Bool) -> [(at: Int, decibels: Double)] {
        var ducking = PageDucking()
        return stride(from: 0, to: milliseconds, by: 5).map { t in
            let gains = ducking.advance(pageSounded: sounding(t), samples: 240, now: UInt64(t) * 1_000_000)
            return (t, 20 * log10(Double(gains.last)))
        }
    }

    @Test func downBy15dBWithin20msHeldOverPausesAndBackWithin300ms() {
        // A page sounding from 100 to 1,000 ms, with a 40 ms pause between words at 500 ms.
        let gains = Self.run(milliseconds: 1_600) { ($0 >= 100 && $0 < 1_000) && !($0 >= 500 && $0 < 540) }
        func at(_ t: Int) -> Double { gains.first { $0.at == t }!.decibels }
        #expect(at(95) == 0)
        #expect(abs(at(120) + 15) < 0.01, "\(at(120)) dB 20 ms into the page")
        #expect((130..<1_000).allSatisfy { $0 % 5 != 0 || abs(at($0) + 15) < 0.01 }, "a pause between words let the others up")
        // The last sounding period began at 995 ms: held 60 ms, then up over 200 ms.
        #expect(at(1_050) < -14.9 && at(1_150) < -7 && at(1_150) > -9, "\(at(1_050)) and \(at(1_150)) dB")
        #expect(at(1_290) == 0, "\(at(1_290)) dB 295 ms after the page's last sound")
        // Never a step: at most 15 dB over 20 ms down, 15 dB over 200 ms up (5 ms periods).
        for (previous, next) in zip(gains, gains.dropFirst()) {
            #expect(next.decibels - previous.decibels <= 0.375 + 1e-3 && previous.decibels - next.decibels <= 3.75 + 1e-3, "\(previous) → \(next)")
        }
    }

    @Test func noPageNoDucking() {
        #expect(Self.run(milliseconds: 500) { _ in false }.allSatisfy { $0.decibels == 0 })
    }
}
