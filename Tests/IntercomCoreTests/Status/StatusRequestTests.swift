import IntercomCore
import Testing

@Suite("Status requests: read with bounds from a local client")
struct StatusRequestTests {
    static func parse(_ text: String) -> Result<StatusRequest, StatusRequestError> { StatusRequest.parse(Array(text.utf8)) }

    @Test(arguments: [
        ("status", StatusRequest.status), ("status json\n", .status), ("  status\r\n", .status),
        ("pair", .pair(code: nil)), ("pair 012345", .pair(code: "012345")), ("pair result\nextra", .pairResult),
        ("unpair laptop", .unpair(device: "laptop")), (" unpair  kitchen pi  \n", .unpair(device: "kitchen pi")),
        ("unpair 3f2a-91c0-77de-0b41", .unpair(device: "3f2a-91c0-77de-0b41")),
        ("volume 80 kitchen pi", .volume(device: "kitchen pi", percent: 80)), ("  volume   0  laptop ", .volume(device: "laptop", percent: 0)),
        ("volume 400 3f2a-91c0", .volume(device: "3f2a-91c0", percent: 400)),
        ("mute kitchen pi", .mute(device: "kitchen pi")), ("unmute  laptop\n", .unmute(device: "laptop")),
        ("page", .page(target: nil)), ("page result", .pageResult), ("page to all", .page(target: .all)),
        ("page to room:kitchen\n", .page(target: .room(GroupName("kitchen")!))), ("page  to  kitchen pi ", .page(target: .device(GroupName("kitchen pi")!))),
        ("page to result", .page(target: .device(GroupName("result")!))),
    ])
    func knownRequests(line: String, expected: StatusRequest) {
        #expect(Self.parse(line) == .success(expected))
        #expect(Self.parse(expected.line) == .success(expected), "a request reads back from its own line")
    }

    @Test func anythingElseIsRefusedWithALineSafeToPrint() {
        #expect(Self.parse("pair 12345") == .failure(.badCode))
        #expect(Self.parse("pair １２３４５６") == .failure(.badCode), "digits of other scripts are not a code")
        #expect(Self.parse("pair 123456 now") == .failure(.badCode))
        #expect(Self.parse("status please") == .failure(.unknown("status please")))
        #expect(Self.parse("unpair") == .failure(.badDevice) && Self.parse("unpair   ") == .failure(.badDevice))
        #expect(Self.parse("unpair a\u{1B}[2Jb") == .failure(.badDevice) && Self.parse("unpair a\u{9B}b") == .failure(.badDevice))
        #expect(Self.parse("unpair " + String(repeating: "x", count: StatusRequest.maximumDeviceBytes + 1)) == .failure(.badDevice))
        #expect(Self.parse("mute") == .failure(.badDevice) && Self.parse("unmute a\u{1B}[2Jb") == .failure(.badDevice))
        #expect(Self.parse("volume 80") == .failure(.badVolume) && Self.parse("volume laptop") == .failure(.badVolume))
        #expect(Self.parse("volume 401 laptop") == .failure(.badVolume) && Self.parse("volume -1 laptop") == .failure(.badVolume))
        #expect(Self.parse("volume 0080 laptop") == .failure(.badVolume) && Self.parse("volume 80") == .failure(.badVolume))
        #expect(Self.parse("volume 80 \u{9B}") == .failure(.badDevice))
        #expect(Self.parse("page kitchen") == .failure(.badTarget) && Self.parse("page to") == .failure(.badTarget))
        #expect(Self.parse("page to room:") == .failure(.badTarget) && Self.parse("page to " + String(repeating: "x", count: 33)) == .failure(.badTarget))
        #expect(Self.parse("page to a\u{1B}[2Jb") == .failure(.badDevice))
        #expect(StatusRequest.parse([0x73, 0xFF, 0x0A]) == .failure(.notText))
        #expect(StatusRequest.parse([UInt8](repeating: 0x61, count: StatusRequest.maximumBytes + 1)) == .failure(.tooLong))
        guard case .failure(let error) = Self.parse("\u{1B}]0;pwned\u{07}" + String(repeating: "x", count: 200)) else {
            Issue.record("an escape sequence was taken for a request")
            return
        }
        #expect(!error.description.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        #expect(error.description.count < 120)
    }
}
