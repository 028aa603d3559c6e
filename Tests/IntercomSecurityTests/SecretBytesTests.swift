import IntercomCore
@testable import IntercomSecurity
import Testing

@Suite("Secrets in guarded memory")
struct SecretBytesTests {
    @Test func storageReadsBackWhatWasPutIn() {
        let bytes = (0..<64).map { UInt8($0 * 3 & 0xFF) }
        let secret = SecretBytes(copying: bytes)
        #expect(secret.count == 64)
        #expect(secret.withUnsafeBytes { Array($0) } == bytes)
        #expect(secret.withUnsafeBytes(offset: 32, count: 32) { Array($0) } == Array(bytes[32...]))
        let written = SecretBytes(count: 3) { $0.copyBytes(from: [7, 8, 9]) }
        #expect(written.withUnsafeBytes { Array($0) } == [7, 8, 9])
    }

    @Test func equalityComparesTheBytesAndDescriptionShowsNone() {
        let a = SecretBytes(copying: [1, 2, 3]), b = SecretBytes(copying: [1, 2, 3]), c = SecretBytes(copying: [1, 2, 4])
        #expect(a == b && a != c && a != SecretBytes(copying: [1, 2]))
        #expect(a.description == "SecretBytes(3 bytes)" && "\(c)" == "SecretBytes(3 bytes)")
    }

    @Test func randomSecretsDiffer() {
        let a = SecretBytes.random(count: 32), b = SecretBytes.random(count: 32)
        #expect(a != b && a.count == 32)
        #expect(a.withUnsafeBytes { $0.contains { $0 != 0 } })
    }

    /// A secret that had to pass through an array is zeroed where it is, not in a copy.
    @Test func wipingAnArrayZeroesItsOwnStorageInPlace() {
        var bytes = Sodium.randomBytes(48) + [0xFF]
        let before = bytes.withUnsafeBytes { $0.baseAddress }
        Sodium.wipe(&bytes)
        #expect(bytes.count == 49 && bytes.allSatisfy { $0 == 0 })
        #expect(bytes.withUnsafeBytes { $0.baseAddress } == before, "the same buffer, not a fresh one")
        var empty: [UInt8] = []
        Sodium.wipe(&empty)
        #expect(empty.isEmpty)
    }

    @Test func takingAnArrayCopiesItAndZeroesTheArray() {
        var bytes: [UInt8] = [9, 8, 7, 6]
        let before = bytes.withUnsafeBytes { $0.baseAddress }
        let secret = SecretBytes(taking: &bytes)
        #expect(secret.withUnsafeBytes { Array($0) } == [9, 8, 7, 6])
        #expect(bytes == [0, 0, 0, 0] && bytes.withUnsafeBytes { $0.baseAddress } == before)
    }

    /// The buffer has one owner, counted: copies of what holds it share it, and it is freed
    /// (by `sodium_free`, which zeroes it) when the last one goes.
    @Test func theSecretIsFreedWithTheLastValueThatHoldsIt() {
        struct Holder { let secret: SecretBytes }
        weak var watched: SecretBytes?
        do {
            let holder = Holder(secret: SecretBytes.random(count: 32))
            watched = holder.secret
            let copy = holder
            #expect(watched != nil && copy.secret === holder.secret)
        }
        #expect(watched == nil)
    }

    @Test func scratchMemoryStartsZeroed() {
        let seen = Sodium.withScratch(32) { scratch in Array(scratch) }
        #expect(seen == [UInt8](repeating: 0, count: 32))
    }

    /// A session's keys live as long as the session: gone when it is forgotten, or when it is
    /// refused for its age and replaced.
    @Test(arguments: [false, true]) func aSessionsKeysAreReleasedWhenTheSessionEnds(deferred: Bool) throws {
        var pair = ChannelPair { $0.defersHandshakes = deferred }
        pair.connect()
        weak let aKeys = pair.a.sessionKeyStorage(of: "b")
        weak let bKeys = pair.b.sessionKeyStorage(of: "a")
        #expect(aKeys != nil && bKeys != nil)
        #expect(aKeys?.count == 4 * Sodium.aeadKeyBytes)
        // Each side's sending keys are the other's receiving keys, and all four differ.
        let a = try #require(pair.a.sessionKeyStorage(of: "b")).withUnsafeBytes { Array($0) }
        let b = try #require(pair.b.sessionKeyStorage(of: "a")).withUnsafeBytes { Array($0) }
        #expect(a[0..<64] == b[64..<128] && a[64..<128] == b[0..<64])
        #expect(Set(stride(from: 0, to: 128, by: 32).map { Array(a[$0..<($0 + 32)]) }).count == 4)
        pair.a.forget("b")
        #expect(aKeys == nil, "forgotten: the keys are freed")
        #expect(bKeys != nil)
        // B's session ends when it is too old to be used.
        _ = pair.b.maintain(wanted: [String](), now: pair.now + 181 * 1_000_000_000)
        #expect(pair.b.sessionCount == 0 && bKeys == nil)
    }

    /// At a rekey, the replaced session's keys stay while it still decrypts (its grace) and go then.
    @Test func aRekeyReleasesTheReplacedSessionsKeysAfterItsGrace() throws {
        var pair = ChannelPair()
        pair.connect()
        weak let old = pair.a.sessionKeyStorage(of: "b")
        func talkForASecond() throws {
            pair.now += 1_000_000_000
            _ = pair.deliver(pair.a.maintain(wanted: ["b"], now: pair.now), from: "a")
            _ = pair.deliver(pair.b.maintain(wanted: [String](), now: pair.now), from: "b")
            _ = pair.deliver([(try pair.send("audio", from: "a"), "b")], from: "a")
            _ = pair.deliver([(try pair.send("report", from: "b"), "a")], from: "b")
        }
        var seconds = 0
        while pair.a.sessionKeyStorage(of: "b") === old, seconds < 130 {
            try talkForASecond()
            seconds += 1
        }
        #expect(pair.a.counters.rekeys == 1 && (119...122).contains(seconds))
        #expect(old != nil, "the replaced session still decrypts packets in flight")
        for _ in 0..<6 { try talkForASecond() }
        #expect(old == nil)
    }
}
