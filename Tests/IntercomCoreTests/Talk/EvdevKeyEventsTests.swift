import IntercomCore
import Testing

@Suite struct EvdevKeyEventsTests {
    /// A foot switch recorded as the kernel reports it: scan codes (EV_MSC), the key (EV_KEY)
    /// with repeats, and sync reports (EV_SYN) in between.
    static func recording(key: UInt16) -> [UInt8] {
        var bytes: [UInt8] = []
        func event(_ type: UInt16, _ code: UInt16, _ value: Int32, _ ms: Int64) {
            bytes += EvdevKeyEvents.encode(type: type, code: code, value: value, seconds: ms / 1000, microseconds: ms % 1000 * 1000)
        }
        event(4, 4, 458_796, 0); event(1, key, 1, 0); event(0, 0, 0, 0)
        event(1, 30, 1, 100); event(1, 30, 0, 130); event(0, 0, 0, 130)   // another key: ignored
        for t in stride(from: Int64(500), to: 900, by: 33) { event(1, key, 2, t); event(0, 0, 0, t) }
        event(4, 4, 458_796, 950); event(1, key, 0, 950); event(0, 0, 0, 950)
        return bytes
    }

    @Test func followsOneKeyThroughPressRepeatAndRelease() {
        var decoder = EvdevKeyEvents(keyCode: 57)
        let events = decoder.feed(Self.recording(key: 57))
        #expect(events.first == .press)
        #expect(events.last == .release)
        #expect(events.dropFirst().dropLast().allSatisfy { $0 == .repeat })
        #expect(events.count == 2 + 13)
    }

    @Test func eventsSplitAcrossReadsAreReassembled() {
        let bytes = Self.recording(key: 57)
        var whole = EvdevKeyEvents(keyCode: 57)
        let expected = whole.feed(bytes)
        for chunk in [1, 7, 23, 24, 25, 100] {
            var decoder = EvdevKeyEvents(keyCode: 57)
            var events: [PushToTalk.KeyEvent] = []
            for start in stride(from: 0, to: bytes.count, by: chunk) {
                events += decoder.feed(bytes[start..<min(start + chunk, bytes.count)])
            }
            #expect(events == expected, "chunks of \(chunk)")
        }
    }

    @Test func aRecordedStreamDrivesPushToTalkExactly() {
        var decoder = EvdevKeyEvents(keyCode: 183)
        var ptt = PushToTalk(style: .exact)
        let events = decoder.feed(Self.recording(key: 183))
        ptt.handle(events[0], now: 0)
        #expect(ptt.isTransmitting)
        for event in events.dropFirst().dropLast() { ptt.handle(event, now: 500_000_000) }
        #expect(ptt.isTransmitting)
        ptt.handle(events.last!, now: 950_000_000)
        #expect(!ptt.isTransmitting)
    }

    @Test func keyNames() {
        #expect(EvdevKeyEvents.keyCode(named: "space") == 57)
        #expect(EvdevKeyEvents.keyCode(named: "KEY_F13") == 183)
        #expect(EvdevKeyEvents.keyCode(named: "btn_0") == 0x100)
        #expect(EvdevKeyEvents.keyCode(named: "42") == 42)
        #expect(EvdevKeyEvents.keyCode(named: "nonsense") == nil)
    }
}
