import IntercomCore
@testable import IntercomSecurity
import Testing

@Suite("CPace (CPACE-RISTR255-SHA512)")
struct CPaceTests {
    /// draft-irtf-cfrg-cpace-13, appendix B.3.
    enum Vector {
        static let code = Array("Password".utf8)
        static let channel = bytes("6f630b425f726573706f6e6465720b415f696e69746961746f72")
        static let session = bytes("7e4b4791d6a8ef019b936c79fb7f2c57")
        static let generatorString = "11435061636552697374726574746f3235350850617373776f726464" + String(repeating: "00", count: 100)
            + "1a6f630b425f726573706f6e6465720b415f696e69746961746f72107e4b4791d6a8ef019b936c79fb7f2c57"
        static let generator = "a6fc82c3b8968fbb2e06fee81ca858586dea50d248f0c7ca6a18b0902a30b36b"
        static let ya = bytes("da3d23700a9e5699258aef94dc060dfda5ebb61f02a5ea77fad53f4ff0976d08")
        static let Ya = "d40fb265a7abeaee7939d91a585fe59f7053f982c296ec413c624c669308f87a"
        static let yb = bytes("d2316b454718c35362d83d69df6320f38578ed5984651435e2949762d900b80d")
        static let Yb = "08bcf6e9777a9c313a3db6daa510f2d398403319c2341bd506a92e672eb7e307"
        static let K = "e22b1ef7788f661478f3cddd4c600774fc0f41e6b711569190ff88fa0e607e09"
        static let isk = "4c5469a16b2364c4b944ebc1a79e51d1674ad47db26e8718154f59faebfaa52d8346f30aa58377117eb20d527f2cbc5c76381f7fd372e89df8239f87f2e02ed1"
        static func bytes(_ text: String) -> [UInt8] { Hexadecimal.decode(text)! }
    }

    @Test func lengthValueEncodingFollowsTheDraft() {
        #expect(CPace.prependLength([]) == [0])
        #expect(Hexadecimal.encode(CPace.prependLength(Array("1234".utf8))) == "0431323334")
        #expect(CPace.prependLength([UInt8](repeating: 1, count: 128)).prefix(2) == [0x80, 0x01])
        #expect(Hexadecimal.encode(CPace.lengthValueConcatenation([Array("1234".utf8), Array("5".utf8), [], Array("678".utf8)])) == "043132333401350003363738")
    }

    @Test func reproducesThePublishedVector() throws {
        #expect(Hexadecimal.encode(CPace.generatorString(code: Vector.code, channel: Vector.channel, session: Vector.session)) == Vector.generatorString)
        #expect(Hexadecimal.encode(CPace.generator(code: Vector.code, channel: Vector.channel, session: Vector.session)) == Vector.generator)
        let a = CPace.Party(code: Vector.code, channel: Vector.channel, session: Vector.session, scalar: Vector.ya)
        let b = CPace.Party(code: Vector.code, channel: Vector.channel, session: Vector.session, scalar: Vector.yb)
        #expect(Hexadecimal.encode(a.share) == Vector.Ya)
        #expect(Hexadecimal.encode(b.share) == Vector.Yb)
        #expect(a.sharedPoint(peerShare: b.share).map(Hexadecimal.encode) == Vector.K)
        #expect(b.sharedPoint(peerShare: a.share).map(Hexadecimal.encode) == Vector.K)
        let iskA = try #require(a.sessionKey(peerShare: b.share, isInitiator: true, ownData: Array("ADa".utf8), peerData: Array("ADb".utf8)))
        let iskB = try #require(b.sessionKey(peerShare: a.share, isInitiator: false, ownData: Array("ADb".utf8), peerData: Array("ADa".utf8)))
        #expect(iskA.withUnsafeBytes { Hexadecimal.encode($0) } == Vector.isk && iskB == iskA)
    }

    @Test func invalidAndIdentitySharesAreRefused() {
        let party = CPace.Party(code: Array("123456".utf8), channel: [], session: [1])
        #expect(party.sessionKey(peerShare: [UInt8](repeating: 0, count: 32), isInitiator: true, ownData: [], peerData: []) == nil)
        #expect(party.sessionKey(peerShare: [UInt8](repeating: 0xFF, count: 32), isInitiator: true, ownData: [], peerData: []) == nil)
        #expect(party.sessionKey(peerShare: [1, 2, 3], isInitiator: true, ownData: [], peerData: []) == nil)
    }

    @Test func differentCodesOrDataGiveUnrelatedKeys() throws {
        let session = Sodium.randomBytes(16)
        let a = CPace.Party(code: Array("482913".utf8), channel: [], session: session)
        let right = CPace.Party(code: Array("482913".utf8), channel: [], session: session)
        let wrong = CPace.Party(code: Array("482914".utf8), channel: [], session: session)
        let key = a.sessionKey(peerShare: right.share, isInitiator: true, ownData: [1], peerData: [2])
        #expect(key != nil && key == right.sessionKey(peerShare: a.share, isInitiator: false, ownData: [2], peerData: [1]))
        #expect(key != wrong.sessionKey(peerShare: a.share, isInitiator: false, ownData: [2], peerData: [1]))
        #expect(key != right.sessionKey(peerShare: a.share, isInitiator: false, ownData: [3], peerData: [1]))
    }
}
