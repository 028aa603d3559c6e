import Glibc

/// `user@hostname`: the name a peer shows unless told otherwise.
public func defaultPeerName() -> String {
    var host = [CChar](repeating: 0, count: 256)
    let hostname = gethostname(&host, host.count) == 0
        ? String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        : "localhost"
    let user = getenv("USER").map { String(cString: $0) }
        ?? getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) }
        ?? "user"
    return "\(user)@\(hostname)"
}
