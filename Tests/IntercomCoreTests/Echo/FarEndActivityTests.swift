import Foundation
import IntercomCore
import Testing

@Suite struct FarEndActivityTests {
    static let silence = [Int16](repeating: 0, count: 480)
    static let speech = (0..<480).map { Int16(3_000 * sin(Double($0) * 0.1)) }
    static let hum = [Int16](repeating: 50, count: 480)

    /// Frames played in order, and whether the far end counts as active after each.
    @Test(arguments: [
        ([silence, silence], [false, false]),
        ([hum, hum, hum], [false, false, false]),
        ([speech], [true]),
        // 300 ms of hangover: still active for the 29 frames after the last loud one.
        ([speech] + Array(repeating: silence, count: 30), [true] + Array(repeating: true, count: 29) + [false]),
        ([speech, silence, speech, silence], [true, true, true, true]),
    ])
    func activityFollowsTheReferenceWithAHangover(frames: [[Int16]], expected: [Bool]) {
        var activity = FarEndActivity(hangoverMilliseconds: 300, sampleRate: 48_000)
        #expect(!activity.isActive)
        #expect(frames.map { activity.update(reference: $0) } == expected)
    }
}
