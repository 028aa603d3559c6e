import IntercomCore
import Testing

@Suite struct ListenerBudgetTests {
    /// (full bitrate, listeners, bitrate sent, low delay allowed)
    @Test(arguments: [
        (96_000, 0, 96_000, true), (96_000, 1, 96_000, true), (96_000, 2, 96_000, true),
        (96_000, 3, 96_000, false), (96_000, 4, 72_000, false), (96_000, 5, 57_000, false),
        (96_000, 6, 48_000, false), (96_000, 40, 48_000, false),
        // A rate the user chose below the floor is never raised; one between is kept to the floor.
        (32_000, 8, 32_000, false), (64_000, 4, 48_000, false), (510_000, 7, 218_000, false),
    ] as [(Int, Int, Int, Bool)])
    func aStreamHeardByManyCostsAboutWhatThreeFullCopiesWould(full: Int, listeners: Int, bitrate: Int, lowDelay: Bool) {
        let budget = ListenerBudget(fullBitrate: full)
        #expect(budget.bitrate(listeners: listeners) == bitrate)
        #expect(budget.allowsLowDelay(listeners: listeners) == lowDelay)
    }

    @Test func theCopiesTogetherNeverCostMoreThanThreeAtTheFullRateAboveTheFloor() {
        let budget = ListenerBudget(fullBitrate: 96_000)
        for listeners in 4...12 {
            let total = budget.bitrate(listeners: listeners) * listeners
            let floorTotal = ListenerBudget.lowestSharedBitrate * listeners
            #expect(total <= max(96_000 * ListenerBudget.fullRateListeners, floorTotal), "\(listeners) listeners: \(total) b/s")
        }
    }
}
