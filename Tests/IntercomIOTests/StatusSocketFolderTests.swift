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
        let socket = try StatusSocket(path: fresh + "/status.sock") { _, _ in "ok\n" }
        #expect(mode(fresh) == 0o700)
        #expect(mode(fresh + "/status.sock") == 0o600)
        socket.stop()

        let shared = temporaryPath("status-sticky")
        mkdir(shared, 0o777)
        chmod(shared, 0o1777)
        let inShared = try StatusSocket(path: shared + "/status.sock") { _, _ in "ok\n" }
        #expect(mode(shared) == 0o1777, "a shared folder keeps its mode")
        inShared.stop()
    }

    @Test func aFolderOthersCanWriteWithoutTheStickyBitIsRefused() {
        let open = temporaryPath("status-open")
        mkdir(open, 0o777)
        chmod(open, 0o777)
        #expect(throws: StatusSocketError.self) { try StatusSocket(path: open + "/status.sock") { _, _ in "ok\n" } }
        #expect(mode(open) == 0o777)
    }

    @Test func aGroupsFolderGivesTheGroupTheSocketAndAnOpenOneDoesNot() throws {
        // systemd's RuntimeDirectory= with RuntimeDirectoryMode=0750: the group may connect.
        let group = temporaryPath("status-group")
        mkdir(group, 0o750)
        chmod(group, 0o750)
        let inGroup = try StatusSocket(path: group + "/status.sock") { _, _ in "ok\n" }
        #expect(mode(group + "/status.sock") == 0o660)
        #expect(mode(group) == 0o750, "an existing folder is never changed")
        inGroup.stop()

        // Others may enter this one: the socket stays the owner's.
        let readable = temporaryPath("status-readable")
        mkdir(readable, 0o755)
        chmod(readable, 0o755)
        let inReadable = try StatusSocket(path: readable + "/status.sock") { _, _ in "ok\n" }
        #expect(mode(readable + "/status.sock") == 0o600)
        inReadable.stop()
    }

    /// What `request` gets from the socket at `path`, asked as an unprivileged user (uid and gid
    /// 65534) with `groups` as supplementary groups; nil if it cannot connect.
    private func askAsAnotherUser(_ request: String, path: String, groups: String?) -> String? {
        let client = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(sys.argv[1])
            except OSError:
                print("refused"); sys.exit(0)
            s.sendall(sys.argv[2].encode() + b"\\n")
            print(s.makefile().read(), end="")
            """
        let groupArguments = groups.map { ["--groups=\($0)"] } ?? ["--clear-groups"]
        let result = spawnAndWait(["setpriv", "--reuid=65534", "--regid=65534"] + groupArguments + ["/usr/bin/python3", "-c", client, path, request])
        guard result.status == 0 else { return nil }
        return result.output == "refused\n" ? nil : result.output
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs root (to be another user) and python3"))
    func theGroupMayConnectAndTheReplyKnowsWhetherTheClientIsTheOwner() throws {
        let folder = temporaryPath("status-shared")
        mkdir(folder, 0o750)
        chmod(folder, 0o750)
        let path = folder + "/status.sock"
        let socket = try StatusSocket(path: path) { request, client in
            "answered \(String(decoding: request.prefix { $0 != 10 }, as: UTF8.self))\(client.isOwnerOrRoot ? " for the owner" : "")\n"
        }
        defer { socket.stop() }
        let group = "\(getegid())"
        #expect(askAsAnotherUser("status", path: path, groups: group) == "answered status\n")
        #expect(askAsAnotherUser("pair", path: path, groups: group) == "answered pair\n", "told it is not the owner")
        #expect(askAsAnotherUser("status", path: path, groups: nil) == nil, "not in the group: cannot connect")
        #expect(try StatusSocket.ask(.pair(code: nil), path: path) == "answered pair for the owner\n")
    }
}
