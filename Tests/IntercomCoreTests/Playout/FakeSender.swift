import IntercomCore

/// One RTP packet as the fake sender emitted it.
struct SentPacket {
    /// Index among the packets sent (0, 1, 2, …), also encoded in the payload.
    let index: Int
    let sequenceNumber: UInt16
    let timestamp: UInt32
    let marker: Bool
    let payload: [UInt8]
    /// Sending time on the sender's clock, which the simulation treats as true time, in nanoseconds.
    let sendTime: UInt64
}

/// A sender of fake Opus frames whose payload says which frame it is (4 bytes index, 2 bytes length).
struct FakeSender {
    var frameSamples = 480
    var firstSequenceNumber: UInt16 = 0
    var firstTimestamp: UInt32 = 0
    /// Discontinuous transmission: talk for `talk` frames, then send nothing for `silence` frames, repeatedly.
    var talkPattern: (talk: Int, silence: Int)?

    var frameDuration: UInt64 { MediaTime.nanoseconds(frames: frameSamples, rate: VoiceFormat.sampleRate) }

    /// Packets for `slots` frame times; silent slots (DTX) send nothing but still advance the timestamp.
    func packets(slots: Int) -> [SentPacket] {
        var packets: [SentPacket] = []
        var wasSilent = false
        for slot in 0..<slots {
            if let talkPattern, slot % (talkPattern.talk + talkPattern.silence) >= talkPattern.talk {
                wasSilent = true
                continue
            }
            let index = packets.count
            packets.append(SentPacket(
                index: index,
                sequenceNumber: firstSequenceNumber &+ UInt16(truncatingIfNeeded: index),
                timestamp: firstTimestamp &+ UInt32(truncatingIfNeeded: slot * frameSamples),
                marker: index == 0 || wasSilent,
                payload: FramePayload.encode(index: index, samples: frameSamples),
                sendTime: UInt64(slot) * frameDuration
            ))
            wasSilent = false
        }
        return packets
    }
}

/// The fake payload format shared by the sender and the decoders: an Opus table-of-contents
/// byte for the frame's length (the jitter buffer reads it), then the frame's index and length.
enum FramePayload {
    static func encode(index: Int, samples: Int) -> [UInt8] {
        let index = UInt32(index)
        let length = UInt16(samples)
        return [
            toc(samples: samples),
            UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8),
            UInt8(truncatingIfNeeded: index >> 16), UInt8(truncatingIfNeeded: index >> 24),
            UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8),
        ]
    }

    static func decode(_ payload: [UInt8]) -> (index: Int, samples: Int) {
        let index = Int(payload[1]) | Int(payload[2]) << 8 | Int(payload[3]) << 16 | Int(payload[4]) << 24
        let samples = Int(payload[5]) | Int(payload[6]) << 8
        return (index, samples)
    }

    /// A one-frame packet's TOC byte, in the mode intercom's encoders send that length in
    /// (RFC 6716 §3.1): CELT for 2.5 and 5 ms (the low-delay path, no FEC), hybrid for 10 and
    /// 20 ms (the robust path, which may carry FEC), SILK for 40 and 60 ms.
    static func toc(samples: Int) -> UInt8 {
        let configuration: UInt8 = switch samples {
        case 120: 16
        case 240: 17
        case 480: 14
        case 960: 15
        case 1_920: 2
        case 2_880: 3
        default: fatalError("no Opus frame lasts \(samples) samples")
        }
        return configuration << 3
    }
}
