import IntercomCore
import Testing

@Suite("Session description")
struct SessionDescriptionTests {
    @Test func describesAnIPv4Stream() {
        let description = SessionDescription(
            address: "192.168.1.20", port: 5004, frameMilliseconds: 20, shortestFrameMilliseconds: 10, bitsPerSecond: 32_000,
            usesDiscontinuousTransmission: false, sessionID: 3_900_000_000)
        #expect(description.text == """
            v=0\r
            o=- 3900000000 1 IN IP4 192.168.1.20\r
            s=intercom\r
            c=IN IP4 192.168.1.20\r
            t=0 0\r
            m=audio 5004 RTP/AVP 96\r
            a=rtpmap:96 opus/48000/2\r
            a=fmtp:96 minptime=10;useinbandfec=1;usedtx=0;stereo=0;sprop-stereo=0;maxaveragebitrate=32000\r
            a=ptime:20\r
            a=rtcp-mux\r
            a=sendonly\r

            """)
    }

    @Test func describesAnIPv6StreamWithDTX() {
        let description = SessionDescription(
            address: "fd00::2", port: 6000, payloadType: 111, frameMilliseconds: 2.5, bitsPerSecond: 24_000,
            usesDiscontinuousTransmission: true, sessionID: 1)
        let lines = description.text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines == [
            "v=0",
            "o=- 1 1 IN IP6 fd00::2",
            "s=intercom",
            "c=IN IP6 fd00::2",
            "t=0 0",
            "m=audio 6000 RTP/AVP 111",
            "a=rtpmap:111 opus/48000/2",
            // Without a shortest frame given, every frame is as long as ptime.
            "a=fmtp:111 minptime=2.5;useinbandfec=1;usedtx=1;stereo=0;sprop-stereo=0;maxaveragebitrate=24000",
            "a=ptime:2.5",
            "a=rtcp-mux",
            "a=sendonly",
            "",
        ])
    }
}
