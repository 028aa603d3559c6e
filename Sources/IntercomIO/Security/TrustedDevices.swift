import FoundationEssentials
import Glibc
import IntercomCore
import IntercomSecurity

/// A device this one paired with.
public struct TrustedDevice: Codable, Sendable, Equatable {
    public var name: String
    /// The device's X25519 public key, hexadecimal.
    public var publicKey: String
    public var pairedAt: Date
    public var lastSeen: Date?
    /// How loud it plays here (`PeerListening`), absent while never changed: lists written
    /// before there was a volume read as they were.
    public var volume: Int?
    public var muted: Bool?

    public init(name: String, publicKey: [UInt8], pairedAt: Date, lastSeen: Date? = nil) {
        self.name = name
        self.publicKey = Hexadecimal.encode(publicKey)
        self.pairedAt = pairedAt
        self.lastSeen = lastSeen
    }

    public var keyBytes: [UInt8]? { Hexadecimal.decode(publicKey) }

    public var listening: PeerListening {
        get { PeerListening(volumePercent: volume ?? PeerListening.asSent.volumePercent, muted: muted ?? false) }
        set {
            volume = newValue.volumePercent
            muted = newValue.muted
        }
    }

    /// How it plays here, for a person: "kitchen (4f2a-…): volume 80 %, muted", safe to print.
    public var listeningDescription: String {
        let fingerprint = keyBytes.map { Fingerprint(publicKey: $0).description } ?? "invalid key"
        return StatusReply.listeningDescription(
            name: TerminalText.sanitized(name), fingerprint: fingerprint, volumePercent: listening.volumePercent, muted: listening.muted
        )
    }

    enum CodingKeys: String, CodingKey {
        case name, publicKey = "public_key", pairedAt = "paired_at", lastSeen = "last_seen", volume, muted
    }
}

/// The trusted devices of a state directory (`trusted.json`, 0600). Every change takes the
/// directory's lock and replaces the file in one step, so concurrent `pair` and `unpair` runs
/// and a running call never see half a list.
public struct TrustedDeviceStore: Sendable {
    public let directory: StateDirectory
    public static let fileName = "trusted.json"
    /// A bound on the list, so that a corrupt or hostile file cannot make us read without end.
    public static let capacity = 256

    public init(directory: StateDirectory) {
        self.directory = directory
    }

    private var path: String { directory.file(Self.fileName) }
    private static let lockName = "trusted.lock"

    /// The list; empty when there is none (nor a state directory yet).
    public func load() throws -> [TrustedDevice] {
        guard let handle = try directory.open() else { return [] }
        return try load(in: handle)
    }

    private func load(in handle: StateDirectory.Handle) throws -> [TrustedDevice] {
        guard let bytes = try PrivateFile.read(Self.fileName, in: handle) else { return [] }
        do {
            return Array(try Self.decoder.decode([TrustedDevice].self, from: Data(bytes)).prefix(Self.capacity))
        } catch {
            throw PrivateFileError.malformed(path: path, reason: "\(error)")
        }
    }

    /// The public keys, for the call's trust check.
    public func trustedKeys() throws -> Set<[UInt8]> {
        Set(try load().compactMap(\.keyBytes))
    }

    /// Adds a device or, for a key already there, renames it and renews its pairing date
    /// (keeping how loud it plays here).
    public func add(_ device: TrustedDevice) throws {
        try modify { devices in
            var added = device
            if let earlier = devices.first(where: { $0.publicKey == device.publicKey }), device.volume == nil, device.muted == nil {
                (added.volume, added.muted) = (earlier.volume, earlier.muted)
            }
            devices.removeAll { $0.publicKey == device.publicKey }
            devices.append(added)
            guard devices.count <= Self.capacity else { throw TrustedDeviceError.full(Self.capacity) }
        }
    }

    /// Removes the device whose name, fingerprint or public key is `query`; a name that
    /// matches several devices is ambiguous and removes nothing.
    @discardableResult
    public func remove(matching query: String) throws -> TrustedDevice {
        try modify { devices in
            let index = try Self.index(matching: query, in: devices)
            return devices.remove(at: index)
        }
    }

    /// Changes how loud the device that `query` names (as for `remove`) plays here; running
    /// calls follow within 2 s. Returns the device as it is now.
    @discardableResult
    public func changeListening(matching query: String, _ change: (inout PeerListening) -> Void) throws -> TrustedDevice {
        try modify { devices in
            let index = try Self.index(matching: query, in: devices)
            change(&devices[index].listening)
            return devices[index]
        }
    }

    /// The one device whose public key, fingerprint or (failing those) name is `query`.
    private static func index(matching query: String, in devices: [TrustedDevice]) throws -> Int {
        let normalized = query.lowercased()
        let byKey = devices.indices.filter {
            devices[$0].publicKey == normalized || devices[$0].keyBytes.map { Fingerprint(publicKey: $0).matches(normalized) } == true
        }
        let matches = byKey.isEmpty ? devices.indices.filter { devices[$0].name == query } : byKey
        guard let first = matches.first else { throw TrustedDeviceError.notFound(query) }
        guard matches.count == 1 else { throw TrustedDeviceError.ambiguous(query, matches.map { devices[$0].name }) }
        return first
    }

    /// Notes when devices were last in a call with us.
    public func markSeen(_ keys: Set<[UInt8]>, at date: Date) throws {
        guard !keys.isEmpty else { return }
        try modify { devices in
            for index in devices.indices where devices[index].keyBytes.map(keys.contains) == true {
                devices[index].lastSeen = date
            }
        }
    }

    /// A stamp that changes whenever the file is replaced: a running call reloads on a change.
    public func stamp() -> FileStamp? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return FileStamp(inode: UInt64(status.st_ino), seconds: status.st_mtim.tv_sec, nanoseconds: status.st_mtim.tv_nsec)
    }

    private func modify<Result>(_ change: (inout [TrustedDevice]) throws -> Result) throws -> Result {
        let handle = try directory.prepare()
        return try PrivateFile.withLock(Self.lockName, in: handle) {
            PrivateFile.removeLeftovers(of: Self.fileName, in: handle)
            var devices = try load(in: handle)
            let result = try change(&devices)
            try PrivateFile.replace(Self.fileName, in: handle, Array(try Self.encoder.encode(devices)))
            return result
        }
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

public struct FileStamp: Equatable, Sendable {
    let inode: UInt64
    let seconds: Int
    let nanoseconds: Int
}

public enum TrustedDeviceError: Error, Equatable, CustomStringConvertible {
    case notFound(String)
    case ambiguous(String, [String])
    case full(Int)

    public var description: String {
        switch self {
        case .notFound(let query): "no paired device is called \(query) or has that fingerprint"
        case .ambiguous(let query, let names): "\(names.count) paired devices are called \(query): name one by its fingerprint"
        case .full(let capacity): "at most \(capacity) devices can be paired"
        }
    }
}
