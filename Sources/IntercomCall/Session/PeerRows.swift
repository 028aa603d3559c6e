import IntercomCore
import IntercomSecurity

/// The peers as displays show them: one row per peer, in the order of their addresses' text.
/// The rows, and the strings in them, are made again only when the peers or their names
/// change; otherwise only their figures are, in place, so that publishing allocates nothing.
struct PeerRows<Address: Hashable & Sendable & CustomStringConvertible> {
    private(set) var rows: [PeerSnapshot] = []
    /// The address, name, rooms and target each row was made for, as the peer's hello sent them.
    private var addresses: [Address] = []
    private var names: [String?] = []
    private var rooms: [[UInt8]] = []
    private var targets: [(kind: UInt8, room: [UInt8])] = []
    /// Peers' key fingerprints as shown, made once per key (hashing and formatting allocate).
    private var fingerprints: [DeviceKey: String] = [:]

    /// Brings the rows up to date; the device keys of the peers with a session go into `devicesSeen`.
    mutating func update(
        peers table: [Address: PeerTable<Address>.Peer], now: UInt64, security: SessionSecurity<Address>?,
        roundTrips: [Address: UInt64], remoteReports: [Address: (block: ReportBlock, at: UInt64)], devicesSeen: inout Set<DeviceKey>
    ) {
        let unchanged = rows.count == table.count && addresses.indices.allSatisfy { index in
            table[addresses[index]].map {
                $0.name == names[index] && $0.rooms == rooms[index]
                    && $0.heardTargetKind == targets[index].kind && $0.heardTargetRoom == targets[index].room
            } ?? false
        }
        if !unchanged { remake(from: table) }
        for index in rows.indices {
            guard let peer = table[addresses[index]] else { continue }
            let key = security?.remoteKey(of: peer.address)
            if let key { devicesSeen.insert(key) }
            let row = rows[index]
            // A paired device is shown by the name it was stored under at pairing, not by the
            // one its hello or discovery says (the peer's to choose); our own processes by theirs.
            let paired = key.flatMap { security?.paired[$0] }
            rows[index] = PeerSnapshot(
                address: row.address, name: paired?.name ?? row.name, origin: peer.origin.rawValue, ssrc: peer.ssrc, talking: peer.talking,
                secondsSinceHeard: peer.lastHeard.map { MediaTime.seconds(nanoseconds: Double(now - min(now, $0))) },
                roundTripMilliseconds: roundTrips[peer.address].map { MediaTime.milliseconds(nanoseconds: Double($0)) },
                reportedFractionLost: remoteReports[peer.address].map { Double($0.block.fractionLost) / 256 },
                reportedJitterMilliseconds: remoteReports[peer.address].map { MediaTime.milliseconds(samples: Double($0.block.jitter)) },
                fingerprint: key.map { fingerprint(of: $0) },
                listening: paired.map { .init(volumePercent: $0.listening.volumePercent, muted: $0.listening.muted) },
                rooms: row.rooms, to: row.to
            )
        }
    }

    private mutating func remake(from table: [Address: PeerTable<Address>.Peer]) {
        let sorted = table.values.sorted { $0.address.description < $1.address.description }
        addresses = sorted.map(\.address)
        names = sorted.map(\.name)
        rooms = sorted.map(\.rooms)
        targets = sorted.map { ($0.heardTargetKind, $0.heardTargetRoom) }
        rows = sorted.map { peer in
            PeerSnapshot(
                address: peer.address.description, name: peer.name.map { TerminalText.sanitized($0) },
                origin: peer.origin.rawValue, ssrc: nil, talking: false, secondsSinceHeard: nil, roundTripMilliseconds: nil,
                reportedFractionLost: nil, reportedJitterMilliseconds: nil, fingerprint: nil, listening: nil,
                rooms: PeerHelloView.rooms(in: peer.rooms[...]).map { TerminalText.sanitized($0.text) },
                to: TerminalText.sanitized(PeerHelloView.target(kind: peer.heardTargetKind, room: peer.heardTargetRoom[...]).description)
            )
        }
    }

    /// A device key's fingerprint as shown (`3f2a-91c0-77de-0b41`).
    mutating func fingerprint(of key: DeviceKey) -> String {
        if let known = fingerprints[key] { return known }
        // Only authenticated keys get here, but a long call may meet many: keep the cache small.
        if fingerprints.count >= 64 { fingerprints.removeAll() }
        let made = key.fingerprint.description
        fingerprints[key] = made
        return made
    }
}
