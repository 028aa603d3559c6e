import Foundation
@testable import IntercomCall
import IntercomCore
import Testing

/// The status socket's replies: typed both ways, one JSON line each, never mistaken for the
/// call's figures (which answer `status`).
@Suite struct StatusReplyTests {
    static let replies: [StatusReply] = [
        .refused(reason: "a page is already playing", later: true),
        .refused(reason: "only root or the daemon's own user may ask 'pair'", later: false),
        .pairingStarted(code: "123456"), .pairingStarted(code: nil), .pairingRunning,
        .paired(name: "kitchen \"pi\"", fingerprint: "3f2a-91c0-77de-0b41"), .pairingWrongCode, .pairingTimedOut,
        .unpaired(name: "hall", fingerprint: "3f2a-91c0-77de-0b41"),
        .listening(name: "hall", fingerprint: "3f2a-91c0-77de-0b41", volumePercent: 40, muted: true),
        .paging(devices: 2, seconds: 2.5, target: "room:kitchen"), .pagePlaying, .paged(devices: 2, target: "room:kitchen"),
    ]

    @Test(arguments: replies)
    func aReplyIsOneLineThatReadsBackTheSame(reply: StatusReply) throws {
        let line = reply.line
        #expect(line.hasSuffix("\n") && line.dropLast().allSatisfy { $0 != "\n" }, "\(line)")
        #expect(try StatusReply(line: line) == reply)
    }

    /// As Docs/protocol.md writes them.
    @Test func theWireFormIsOneKeyNamingTheReply() {
        #expect(StatusReply.refused(reason: "x", later: true).line == #"{"refused":{"later":true,"reason":"x"}}"# + "\n")
        #expect(StatusReply.pairingStarted(code: "123456").line == #"{"pairing_started":{"code":"123456"}}"# + "\n")
        #expect(StatusReply.listening(name: "a", fingerprint: "f", volumePercent: 40, muted: false).line
            == #"{"listening":{"fingerprint":"f","muted":false,"name":"a","volume_percent":40}}"# + "\n")
    }

    @Test func theCallsFiguresAndFreeTextAreNotReplies() {
        let figures = #"{"call":{"peers":[],"to":"all"},"mode":"open","name":"hall","pid":1,"port":5004}"#
        #expect(throws: (any Error).self) { try StatusReply(line: figures) }
        #expect(throws: (any Error).self) { try StatusReply(line: "paged 2 all\n") }
        #expect(throws: (any Error).self) { try StatusReply(line: #"{"paged":{"devices":2,"target":"all"},"pagePlaying":{}}"#) }
    }

    @Test func aMalformedRequestIsRefusedWithItsReason() throws {
        guard case .failure(let error) = StatusRequest.parse(Array("volume loud hall".utf8)) else {
            Issue.record("a volume of 'loud' was taken")
            return
        }
        let reply = try StatusReply(line: StatusReply(error).line)
        #expect(reply == .refused(reason: error.reason, later: false))
        #expect(reply.refusal.hasPrefix("volume takes a percentage"))
    }
}
