/// One chunk of an RTCP SDES packet (RFC 3550 §6.5): a source and the items describing it.
public struct SDESChunk: Equatable, Sendable {
    public var ssrc: UInt32
    public var items: [SDESItem]

    public init(ssrc: UInt32, items: [SDESItem]) {
        self.ssrc = ssrc
        self.items = items
    }

    init(_ chunk: SDESChunkView) {
        self.init(ssrc: chunk.ssrc, items: chunk.map { SDESItem(type: $0.type, value: Array($0.value)) })
    }

    func append(to bytes: inout [UInt8]) {
        bytes.appendBigEndian(ssrc)
        for item in items {
            precondition(item.type != SDESItem.endOfList, "SDES item type 0 ends the item list")
            let value = item.wireValue
            bytes.append(item.type)
            bytes.append(UInt8(value.count))
            bytes += value
        }
        // At least one null octet ends the item list, then more up to the word boundary.
        bytes.append(SDESItem.endOfList)
        bytes.padToWordBoundary()
    }
}

/// An item of an SDES chunk. Text is UTF-8 and cut to 255 bytes on the wire.
public enum SDESItem: Equatable, Sendable {
    /// CNAME: the persistent transport-level name of the source, such as `user@host`.
    case canonicalName(String)
    /// NAME: the name the user goes by.
    case name(String)
    /// Any other item type (EMAIL, TOOL, PRIV, ...), kept as raw bytes. Type 0 ends an
    /// item list on the wire and cannot be sent as an item.
    case other(type: UInt8, value: [UInt8])

    static let endOfList: UInt8 = 0
    static let canonicalNameType: UInt8 = 1
    static let nameType: UInt8 = 2
    static let maximumValueLength = 255

    init(type: UInt8, value: [UInt8]) {
        switch type {
        case Self.canonicalNameType: self = .canonicalName(String(decoding: value, as: UTF8.self))
        case Self.nameType: self = .name(String(decoding: value, as: UTF8.self))
        default: self = .other(type: type, value: value)
        }
    }

    var type: UInt8 {
        switch self {
        case .canonicalName: Self.canonicalNameType
        case .name: Self.nameType
        case .other(let type, _): type
        }
    }

    var wireValue: [UInt8] {
        switch self {
        case .canonicalName(let text), .name(let text): text.utf8Prefix(maximumByteCount: Self.maximumValueLength)
        case .other(_, let value): Array(value.prefix(Self.maximumValueLength))
        }
    }
}
