@testable import IntercomIO
import Testing

@Suite("Socket addresses")
struct SocketAddressTests {
    @Test(arguments: ["127.0.0.1:5004", "[::1]:5004", "10.1.2.3:65535", "[fd00::1:2]:1"])
    func parsesNumericAddressesAndPrintsThemBack(text: String) throws {
        #expect(try SocketAddress.parse(text).description == text)
    }

    @Test func parsesIntoFamilyBytesAndPort() throws {
        let ipv4 = try SocketAddress.parse("192.168.1.20:5004")
        #expect(ipv4.family == .ipv4)
        #expect(ipv4.addressBytes == [192, 168, 1, 20])
        #expect(ipv4.port == 5004)
        #expect(try SocketAddress.parse("[::1]:6000") == .loopbackIPv6(port: 6000))
    }

    @Test func treatsV4MappedAddressesAsIPv4() throws {
        let mapped = try SocketAddress.parse("[::ffff:127.0.0.1]:5004")
        #expect(mapped == .loopbackIPv4(port: 5004))
        #expect(Set([mapped, .loopbackIPv4(port: 5004)]).count == 1)
    }

    /// Only where /etc/hosts answers: a DNS lookup would leave the machine.
    @Test(.enabled(if: LoopbackNetwork.hostsFileNamesLocalhost, "/etc/hosts does not name localhost"))
    func resolvesLocalhost() throws {
        let address = try SocketAddress.parse("localhost:5004")
        #expect(address == .loopbackIPv4(port: 5004) || address == .loopbackIPv6(port: 5004))
    }

    @Test(arguments: [
        ("127.0.0.1", SocketAddressError.Reason.missingPort),
        (":5004", .missingHost),
        ("127.0.0.1:0", .badPort("0")),
        ("127.0.0.1:70000", .badPort("70000")),
        ("127.0.0.1:http", .badPort("http")),
        ("::1:5004", .unbracketedIPv6),
        ("[::1:5004", .unclosedBracket),
        ("[::1]", .missingPort),
        ("[localhost]:5004", .notIPv6Literal),
        ("[127.0.0.1]:5004", .notIPv6Literal),
    ])
    func rejectsMalformedInput(text: String, reason: SocketAddressError.Reason) {
        #expect(throws: SocketAddressError(input: text, label: "--peer", reason: reason)) {
            try SocketAddress.parse(text, label: "--peer")
        }
    }

    @Test func errorsNameTheOptionAndTheInput() {
        #expect(throws: SocketAddressError.self) { try SocketAddress.parse("x", label: "--peer") }
        do {
            _ = try SocketAddress.parse("x", label: "--peer")
        } catch {
            #expect(error.description == "bad --peer 'x': no port; expected HOST:PORT or [IPV6]:PORT")
        }
    }

    @Test func describesUnresolvableNames() {
        // Built by hand: a failing lookup in a test would ask a DNS server off this machine.
        let error = SocketAddressError(input: "nowhere:5004", label: "--peer", reason: .unresolvable("Name or service not known"))
        #expect(error.description == "bad --peer 'nowhere:5004': cannot resolve the host: Name or service not known")
    }

    @Test func buildsAddressesFromBytes() {
        #expect(SocketAddress(ipv4Bytes: [127, 0, 0, 1], port: 9) == .loopbackIPv4(port: 9))
        #expect(SocketAddress(ipv4Bytes: [127, 0, 1], port: 9) == nil)
        #expect(SocketAddress(ipv6Bytes: Array(repeating: 0, count: 15) + [1], port: 9) == .loopbackIPv6(port: 9))
        #expect(SocketAddress(ipv6Bytes: [0xFE, 0x80] + Array(repeating: 0, count: 13) + [1], port: 9, scopeID: 2)?
            .description == "[fe80::1%2]:9")
        #expect(SocketAddress.anyIPv6(port: 0).isUnspecified)
        #expect(SocketAddress.loopbackIPv4(port: 1).withPort(2) == .loopbackIPv4(port: 2))
    }
}
