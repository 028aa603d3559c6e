@testable import IntercomCall
import Testing

/// The hand-over of a daemon's page to the capture thread.
@Suite struct PageFeedTests {
    @Test func aPageIsTakenFrameByFrameThenTheFeedIsFreeAgain() {
        let feed = PageFeed()
        var frame = [Int16](repeating: 7, count: 4)
        #expect(!feed.next(into: &frame) && frame == [7, 7, 7, 7], "no page: the microphone's frame is left alone")
        #expect(feed.offer([1, 2, 3, 4, 5, 6]))
        #expect(feed.isBusy && !feed.offer([9]), "a second page while one plays")
        #expect(feed.next(into: &frame) && frame == [1, 2, 3, 4])
        #expect(feed.next(into: &frame) && frame == [5, 6, 0, 0], "the page's end, padded with silence")
        #expect(!feed.isBusy && !feed.next(into: &frame))
        #expect(!feed.offer([]), "an empty page")
        #expect(feed.offer([8]) && feed.next(into: &frame) && frame == [8, 0, 0, 0], "the next page starts from its beginning")
    }
}
