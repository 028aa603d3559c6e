import Foundation
import IntercomCore
@testable import IntercomIO
import IntercomSecurity
import Testing

@Suite("Device identity and trusted devices")
struct DeviceIdentityTests {
    private func freshDirectory() -> StateDirectory {
        StateDirectory(path: NSTemporaryDirectory() + "intercom-state-\(getpid())-\(UUID().uuidString)/nested")
    }

    private func mode(_ path: String) -> mode_t {
        var status = stat()
        lstat(path, &status)
        return status.st_mode & 0o7777
    }

    @Test func anIdentityIsMadeOnceKept0600AndReadBack() throws {
        let directory = freshDirectory()
        let first = try DeviceIdentity.loadOrCreate(in: directory)
        let again = try DeviceIdentity.loadOrCreate(in: directory)
        #expect(first.publicKey == again.publicKey && first.privateKey == again.privateKey)
        #expect(mode(directory.file(DeviceIdentity.fileName)) == 0o600)
        #expect(mode(directory.path) == 0o700)
        #expect(first.publicKey == Sodium.x25519PublicKey(first.privateKey))
    }

    @Test func processesStartingAtOnceAgreeOnOneIdentity() async throws {
        let directory = freshDirectory()
        let keys = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<16 { group.addTask { try DeviceIdentity.loadOrCreate(in: directory).publicKey } }
            return try await group.reduce(into: Set<[UInt8]>()) { $0.insert($1) }
        }
        #expect(keys.count == 1)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(leftovers == [DeviceIdentity.fileName], "no temporary files are left behind")
    }

    @Test func aLinkedOrSharedDirectoryIsRefused() throws {
        let base = NSTemporaryDirectory() + "intercom-state-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: base + "/real", withIntermediateDirectories: true)
        symlink(base + "/real", base + "/link")
        #expect(throws: StateDirectoryError.notADirectory(base + "/link")) {
            try StateDirectory(path: base + "/link").prepare()
        }
        mkdir(base + "/shared", 0o777)
        chmod(base + "/shared", 0o777)
        #expect(throws: StateDirectoryError.writableByOthers(base + "/shared")) {
            try StateDirectory(path: base + "/shared").prepare()
        }
        #expect(mode(base + "/shared") == 0o777, "an existing directory keeps its mode")
        // Sticky (as /tmp is) is no better: another user may have made the files in it first.
        mkdir(base + "/sticky", 0o700)
        chmod(base + "/sticky", 0o1777)
        #expect(throws: StateDirectoryError.writableByOthers(base + "/sticky")) {
            try StateDirectory(path: base + "/sticky").prepare()
        }
    }

    /// Another user's directory is refused even when no one else may write it: its owner could
    /// have planted an identity or a trusted device there, and can read our keys.
    @Test func aDirectoryAnotherUserOwnsIsRefused() throws {
        let foreign: String
        if geteuid() == 0 {
            foreign = NSTemporaryDirectory() + "intercom-state-\(getpid())-\(UUID().uuidString)"
            mkdir(foreign, 0o700)
            chown(foreign, 65534, 65534)
        } else {
            foreign = "/usr"  // root's, 0755
        }
        var status = stat()
        lstat(foreign, &status)
        #expect(throws: StateDirectoryError.foreignOwner(foreign, owner: status.st_uid, user: geteuid())) {
            try DeviceIdentity.loadOrCreate(in: StateDirectory(path: foreign))
        }
        #expect(throws: StateDirectoryError.foreignOwner(foreign, owner: status.st_uid, user: geteuid())) {
            try TrustedDeviceStore(directory: StateDirectory(path: foreign)).load()
        }
    }

    /// A directory above the state directory that another user owns, or that others may write
    /// (not sticky), lets them rename the state directory away and put theirs in its place: refused,
    /// naming it. A sticky one (as /tmp) is not: there only an entry's owner may move it.
    @Test func aParentAnotherUserCouldSwapTheDirectoryInIsRefused() throws {
        let base = NSTemporaryDirectory() + "intercom-parents-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        chmod(base, 0o755)
        mkdir(base + "/open", 0o777)
        chmod(base + "/open", 0o777)
        #expect(throws: StateDirectoryError.unsafeParent(base + "/open/a/state", parent: base + "/open", reason: "is writable by others (and not sticky)")) {
            try DeviceIdentity.loadOrCreate(in: StateDirectory(path: base + "/open/a/state"))
        }
        mkdir(base + "/sticky", 0o777)
        chmod(base + "/sticky", 0o1777)
        _ = try DeviceIdentity.loadOrCreate(in: StateDirectory(path: base + "/sticky/state"))
        // Through a symbolic link, what is checked is where the directory really is.
        symlink(base + "/open/a", base + "/alias")
        #expect(throws: StateDirectoryError.unsafeParent(base + "/alias/state", parent: base + "/open", reason: "is writable by others (and not sticky)")) {
            try TrustedDeviceStore(directory: StateDirectory(path: base + "/alias/state")).load()
        }
        if geteuid() == 0 {
            mkdir(base + "/theirs", 0o755)
            chown(base + "/theirs", 65534, 65534)
            let state = base + "/theirs/state"
            mkdir(state, 0o700)
            #expect(throws: StateDirectoryError.unsafeParent(state, parent: base + "/theirs", reason: "belongs to user 65534")) {
                try DeviceIdentity.loadOrCreate(in: StateDirectory(path: state))
            }
            #expect(StateDirectoryError.unsafeParent(state, parent: base + "/theirs", reason: "belongs to user 65534").isUnsafe)
        }
    }

    /// What a process killed while it made the identity leaves (its temporary file: a key never
    /// used) is never read and is gone after the next start, with an identity there or not.
    @Test func temporaryIdentityFilesLeftByACrashAreNeverReadAndRemoved() throws {
        let planted = DeviceIdentity(privateKey: Sodium.x25519KeyPair().privateKey)
        let text = Data("intercom-identity 1\nx25519 \(planted.privateKey.withUnsafeBytes { Hexadecimal.encode($0) })\n".utf8)
        func leave(_ name: String, in directory: StateDirectory) {
            #expect(FileManager.default.createFile(atPath: directory.file(name), contents: text, attributes: [.posixPermissions: 0o600]))
        }
        let fresh = freshDirectory()
        try fresh.prepare()
        leave("identity.3k9xq0e1m2", in: fresh)
        leave("identity.z", in: fresh)
        let made = try DeviceIdentity.loadOrCreate(in: fresh)
        #expect(made.publicKey != planted.publicKey)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fresh.path) == [DeviceIdentity.fileName])

        leave("identity.1a2b3c", in: fresh)
        #expect(try DeviceIdentity.loadOrCreate(in: fresh).publicKey == made.publicKey)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fresh.path) == [DeviceIdentity.fileName])
    }

    /// The key goes to and from the file without a string: the text written is the format it
    /// always was, read back in either case of hexadecimal, and anything else is refused.
    @Test func theIdentityFileIsWrittenAndParsedAsBytes() throws {
        let key = Sodium.x25519KeyPair().privateKey
        let hex = key.withUnsafeBytes { Hexadecimal.encode($0) }
        #expect(DeviceIdentity.fileText(key) == Array("intercom-identity 1\nx25519 \(hex)\n".utf8))
        for text in ["intercom-identity 1\nx25519 \(hex)\n", "intercom-identity 1\nx25519 \(hex.uppercased())", "intercom-identity 1\n\nx25519  \(hex)\n"] {
            #expect(try DeviceIdentity.parse(Array(text.utf8), path: "p").privateKey == key)
        }
        for text in [
            "", "intercom-identity 2\nx25519 \(hex)\n", "intercom-identity 1\nx25519 \(hex.dropLast(2))\n",
            "intercom-identity 1\nx25519 \(hex)00\n", "intercom-identity 1\nx25519 \(hex.dropLast())g\n", "intercom-identity 1\ned25519 \(hex)\n",
        ] {
            #expect(throws: PrivateFileError.self) { try DeviceIdentity.parse(Array(text.utf8), path: "p") }
        }
    }

    /// Key files are checked on the descriptor they are read from: a file others may read or
    /// change (0644 identity, 0666 trusted list), or that is not a regular file, is refused.
    @Test func keyFilesOpenToOthersOrNotRegularAreRefused() throws {
        let directory = freshDirectory()
        _ = try DeviceIdentity.loadOrCreate(in: directory)
        let identity = directory.file(DeviceIdentity.fileName)
        chmod(identity, 0o644)
        #expect(throws: PrivateFileError.unsafe(path: identity, reason: "its mode is 0644: others may read or change it (intercom keeps it 0600)")) {
            try DeviceIdentity.loadOrCreate(in: directory)
        }
        chmod(identity, 0o600)
        let store = TrustedDeviceStore(directory: directory)
        try store.add(TrustedDevice(name: "door", publicKey: Sodium.x25519KeyPair().publicKey, pairedAt: Date()))
        chmod(directory.file(TrustedDeviceStore.fileName), 0o666)
        #expect(throws: PrivateFileError.self) { try store.load() }
        #expect(throws: PrivateFileError.self) { try store.add(TrustedDevice(name: "planted", publicKey: Sodium.x25519KeyPair().publicKey, pairedAt: Date())) }
        // A FIFO in the list's place is refused at once, not waited on.
        unlink(directory.file(TrustedDeviceStore.fileName))
        mkfifo(directory.file(TrustedDeviceStore.fileName), 0o600)
        #expect(throws: PrivateFileError.unsafe(path: directory.file(TrustedDeviceStore.fileName), reason: "it is not a regular file")) {
            try store.load()
        }
    }

    @Test func aLinkedIdentityFileIsNotFollowed() throws {
        let directory = freshDirectory()
        try directory.prepare()
        let target = directory.path + "/../elsewhere"
        _ = FileManager.default.createFile(atPath: target, contents: Data("intercom-identity 1\n".utf8))
        symlink(target, directory.file(DeviceIdentity.fileName))
        #expect(throws: (any Error).self) { try DeviceIdentity.loadOrCreate(in: directory) }
    }

    @Test func theStateDirectoryFollowsOptionThenSystemdThenXDG() throws {
        let environment = ["STATE_DIRECTORY": "/var/lib/intercom:/var/lib/other", "XDG_STATE_HOME": "/x", "HOME": "/home/u"]
        #expect(try StateDirectory.resolve(explicit: "/opt/s", environment: environment).path == "/opt/s")
        #expect(try StateDirectory.resolve(explicit: nil, environment: environment).path == "/var/lib/intercom")
        #expect(try StateDirectory.resolve(explicit: nil, environment: ["XDG_STATE_HOME": "/x", "HOME": "/home/u"]).path == "/x/intercom")
        #expect(try StateDirectory.resolve(explicit: nil, environment: ["HOME": "/home/u"]).path == "/home/u/.local/state/intercom")
        #expect(throws: StateDirectoryError.noHome) { try StateDirectory.resolve(explicit: nil, environment: [:]) }
    }

    @Test func trustedDevicesAreAddedRemovedByNameOrFingerprintAndAmbiguityRemovesNothing() throws {
        let store = TrustedDeviceStore(directory: freshDirectory())
        let keys = (0..<3).map { _ in Sodium.x25519KeyPair().publicKey }
        try store.add(TrustedDevice(name: "door", publicKey: keys[0], pairedAt: Date()))
        try store.add(TrustedDevice(name: "garage", publicKey: keys[1], pairedAt: Date()))
        try store.add(TrustedDevice(name: "garage", publicKey: keys[2], pairedAt: Date()))
        #expect(try store.trustedKeys() == Set(keys))
        #expect(mode(store.directory.file(TrustedDeviceStore.fileName)) == 0o600)

        #expect(throws: TrustedDeviceError.ambiguous("garage", ["garage", "garage"])) { try store.remove(matching: "garage") }
        #expect(try store.load().count == 3)
        let fingerprint = Fingerprint(publicKey: keys[2]).description
        #expect(try store.remove(matching: fingerprint.uppercased()).publicKey == TrustedDevice(name: "", publicKey: keys[2], pairedAt: Date()).publicKey)
        #expect(try store.remove(matching: "door").name == "door")
        #expect(try store.trustedKeys() == [keys[1]])
        #expect(throws: TrustedDeviceError.notFound("door")) { try store.remove(matching: "door") }
    }

    /// How loud a device plays is kept with it: changed by name or fingerprint, kept through a
    /// pairing again, and absent (as sent) in a list written before there was a volume.
    @Test func aDevicesVolumeAndMuteAreRememberedWithIt() throws {
        let store = TrustedDeviceStore(directory: freshDirectory())
        let keys = (0..<2).map { _ in Sodium.x25519KeyPair().publicKey }
        try store.add(TrustedDevice(name: "kitchen", publicKey: keys[0], pairedAt: Date()))
        try store.add(TrustedDevice(name: "laptop", publicKey: keys[1], pairedAt: Date()))
        #expect(try store.load().map(\.listening) == [.asSent, .asSent])
        let raw = try String(contentsOfFile: store.directory.file(TrustedDeviceStore.fileName), encoding: .utf8)
        #expect(!raw.contains("volume") && !raw.contains("muted"), "an unchanged device's entry is as it always was")

        #expect(try store.changeListening(matching: "kitchen") { $0 = PeerListening(volumePercent: 60, muted: $0.muted) }.listening
            == PeerListening(volumePercent: 60, muted: false))
        try store.changeListening(matching: Fingerprint(publicKey: keys[0]).description) { $0.muted = true }
        #expect(try store.load().map(\.listening) == [PeerListening(volumePercent: 60, muted: true), .asSent])
        #expect(throws: TrustedDeviceError.notFound("garage")) { try store.changeListening(matching: "garage") { $0.muted = true } }

        // Paired again (renamed): still as quiet and muted.
        try store.add(TrustedDevice(name: "kitchen pi", publicKey: keys[0], pairedAt: Date()))
        #expect(try store.load().first { $0.name == "kitchen pi" }?.listening == PeerListening(volumePercent: 60, muted: true))
        #expect(try store.load().first { $0.name == "kitchen pi" }?.listeningDescription.hasSuffix("volume 60 %, muted") == true)
    }

    @Test func aVolumeKeyStepsUpAndDownAndUndoesItself() {
        var listening = PeerListening.asSent
        var seen: [Int] = []
        for _ in 0..<3 { listening = listening.stepped(louder: true); seen.append(listening.volumePercent) }
        for _ in 0..<3 { listening = listening.stepped(louder: false); seen.append(listening.volumePercent) }
        #expect(seen == [125, 156, 195, 156, 125, 100])
        #expect(PeerListening(volumePercent: 5, muted: false).stepped(louder: false).volumePercent == 5)
        #expect(PeerListening(volumePercent: 0, muted: false).stepped(louder: true).volumePercent == 6)
        #expect(PeerListening(volumePercent: 900, muted: false).volumePercent == 400)
        #expect(PeerListening(volumePercent: 80, muted: true).gain == 0 && PeerListening(volumePercent: 80, muted: false).gain == 0.8)
    }

    @Test func concurrentWritersLoseNoDevice() async throws {
        let store = TrustedDeviceStore(directory: freshDirectory())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { try store.add(TrustedDevice(name: "d\(index)", publicKey: Sodium.x25519KeyPair().publicKey, pairedAt: Date())) }
            }
            try await group.waitForAll()
        }
        #expect(try store.load().count == 20)
    }
}
