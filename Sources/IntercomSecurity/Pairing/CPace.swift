/// CPace, the balanced PAKE of the CFRG (draft-irtf-cfrg-cpace-13), suite
/// CPACE-RISTR255-SHA512: both sides derive the same intermediate session key (ISK) from a
/// short code only if they typed the same one, and a recorded exchange gives nothing to guess
/// the code offline with. One run allows one online guess.
///
/// The draft's notation: PRS is the code, CI the channel identifier, sid the session id,
/// ADa and ADb each side's associated data (here: its static public key and name), Ya and Yb the
/// shares sent, K the shared point, and ISK the key both end with.
public enum CPace {
    public static let domainSeparator = Array("CPaceRistretto255".utf8)
    /// SHA-512's input block: the generator string is padded with zeros up to it.
    static let hashBlockBytes = 128
    public static let shareBytes = 32
    public static let keyBytes = 64

    /// The length, LEB128-encoded, then the bytes (the draft's prepend_len).
    static func prependLength(_ bytes: [UInt8]) -> [UInt8] {
        var length = bytes.count
        var encoded: [UInt8] = []
        repeat {
            let low = UInt8(length & 0x7F)
            length >>= 7
            encoded.append(length > 0 ? low | 0x80 : low)
        } while length > 0
        return encoded + bytes
    }

    /// lv_cat: each part with its length prepended.
    static func lengthValueConcatenation(_ parts: [[UInt8]]) -> [UInt8] {
        parts.flatMap(prependLength)
    }

    static func generatorString(code: [UInt8], channel: [UInt8], session: [UInt8]) -> [UInt8] {
        let padding = max(0, hashBlockBytes - 1 - prependLength(code).count - prependLength(domainSeparator).count)
        return lengthValueConcatenation([domainSeparator, code, [UInt8](repeating: 0, count: padding), channel, session])
    }

    /// The generator g: the generator string hashed to 64 bytes and mapped onto ristretto255.
    static func generator(code: [UInt8], channel: [UInt8], session: [UInt8]) -> [UInt8] {
        Sodium.ristrettoFromHash(Sodium.sha512(generatorString(code: code, channel: channel, session: session)))
    }

    /// transcript_ir: the initiator's share and data first, then the responder's.
    static func initiatorResponderTranscript(_ ya: [UInt8], _ ada: [UInt8], _ yb: [UInt8], _ adb: [UInt8]) -> [UInt8] {
        lengthValueConcatenation([ya, ada]) + lengthValueConcatenation([yb, adb])
    }

    /// One side's part of a run: its secret scalar and the share it sends.
    public struct Party: Sendable {
        /// In guarded memory, freed (zeroed) with the last copy of the party.
        let scalar: SecretBytes
        public let share: [UInt8]
        let session: [UInt8]

        /// `scalar` is for the published test vectors only; a fresh one is drawn otherwise.
        public init(code: [UInt8], channel: [UInt8], session: [UInt8], scalar: [UInt8]? = nil) {
            let secret = scalar.map { SecretBytes(copying: $0) } ?? Sodium.ristrettoRandomScalar()
            self.scalar = secret
            self.session = session
            let g = CPace.generator(code: code, channel: channel, session: session)
            // A generator from a hash is never the identity, so the multiplication cannot fail.
            share = Sodium.withScratch(Sodium.ristrettoBytes) { out in
                precondition(Sodium.ristrettoMultiply(secret, g, into: out))
                return Array(out)
            }
        }

        /// The ISK for the other side's share, in guarded memory, or nil if the share is not a
        /// valid element or gives the identity (the draft's scalar_mult_vfy aborts then). K, the
        /// shared point, is made in scratch memory and hashed from there, and the hash's state
        /// is zeroed: the ISK is written nowhere but into its `SecretBytes`.
        public func sessionKey(
            peerShare: [UInt8], isInitiator: Bool, ownData: [UInt8], peerData: [UInt8]
        ) -> SecretBytes? {
            guard Sodium.isValidRistrettoPoint(peerShare) else { return nil }
            let transcript = isInitiator
                ? CPace.initiatorResponderTranscript(share, ownData, peerShare, peerData)
                : CPace.initiatorResponderTranscript(peerShare, peerData, share, ownData)
            let label = CPace.domainSeparator + Array("_ISK".utf8)
            return Sodium.withScratch(Sodium.ristrettoBytes) { point -> SecretBytes? in
                guard Sodium.ristrettoMultiply(scalar, peerShare, into: point) else { return nil }
                // lv_cat(label, sid, K), then the transcript: K's length prefix is one byte (32).
                return SecretBytes(count: keyBytes) { out in
                    Sodium.sha512(
                        [prependLength(label), prependLength(session), [UInt8(Sodium.ristrettoBytes)]].map { $0[...] },
                        secret: UnsafeRawBufferPointer(point), then: transcript, into: out)
                }
            }
        }

        /// K alone, for the published vectors.
        func sharedPoint(peerShare: [UInt8]) -> [UInt8]? {
            guard Sodium.isValidRistrettoPoint(peerShare) else { return nil }
            return Sodium.withScratch(Sodium.ristrettoBytes) { Sodium.ristrettoMultiply(scalar, peerShare, into: $0) ? Array($0) : nil }
        }
    }
}
