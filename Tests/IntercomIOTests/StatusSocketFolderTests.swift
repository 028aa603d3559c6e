import Foundation
import IntercomIO
import Testing
import TestSupport

@Suite("Status socket folder")
struct StatusSocketFolderTests {
    private func mode(_ path: String) -> mode_t {
        var status = stat()
        lstat(path, &status)
        return status.st_mode & 0o7777
    }

    @Test func aMissingFolderIsMadePrivateAndAnExistingOneKeepsItsMode() throws {
        let fresh = temporaryPath("status-new")
        let socket = try StatusSocket(path: fresh + "/status.sock") { _ in "ok\n" }
        #expect(mode(fresh) == 0o700)
        #expect(mode(fresh + "/status.sock") == 0o600)
        socket.stop()

        let shared = temporaryPath("status-sticky")
        mkdir(shared, 0o777)
        chmod(shared, 0o1777)
        let inShared = try StatusSocket(path: shared + "/status.sock") { _ in "ok\n" }
        #expect(mode(shared) == 0o1777, "a shared folder keeps its mode")
        inShared.stop()
    }

    @Test func aFolderOthersCanWriteWithoutTheStickyBitIsRefused() {
        let open = temporaryPath("status-open")
        mkdir(open, 0o777)
        chmod(open, 0o777)
        #expect(throws: StatusSocketError.self) { try StatusSocket(path: open + "/status.sock") { _ in "ok\n" } }
        #expect(mode(open) == 0o777)
    }
}
