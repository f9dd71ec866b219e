import XCTest

@testable import CastRAOP

final class SpeakerSessionTests: XCTestCase {
    private enum Fixtures {
        static func machine() -> SpeakerSessionStateMachine {
            SpeakerSessionStateMachine(
                announcement: SpeakerAnnouncement(sessionID: 42, localAddress: "10.0.0.2", speakerAddress: "10.0.0.1"),
                controlPort: 7001, timingPort: 7002, firstSequence: 9, firstTimestamp: 1000,
                clientInstance: "0123456789ABCDEF")
        }

        static func ok(_ cseq: Int, _ headers: [(name: String, value: String)] = []) -> RTSPResponse {
            RTSPResponse(status: 200, reason: "OK", headers: [("CSeq", "\(cseq)")] + headers)
        }

        static let transport = "RTP/AVP/UDP;unicast;mode=record;server_port=6001;control_port=6002;timing_port=6003"
    }

    func testAnnounceSetupRecordThenFlushVolumeTeardown() throws {
        var machine = Fixtures.machine()
        let announce = machine.start()
        XCTAssertEqual(announce.request.method, "ANNOUNCE")
        XCTAssertEqual(announce.request.uri, "rtsp://10.0.0.2/42")
        let sdp = String(decoding: announce.request.body, as: UTF8.self)
        XCTAssertTrue(sdp.contains("a=rtpmap:96 L16/44100/2\r\n"), sdp)
        XCTAssertFalse(sdp.contains("fmtp") || sdp.contains("rsaaeskey"), sdp)
        let wire = String(decoding: announce.request.encoded(cseq: announce.cseq), as: UTF8.self)
        XCTAssertTrue(wire.hasPrefix("ANNOUNCE rtsp://10.0.0.2/42 RTSP/1.0\r\nCSeq: 1\r\n"), wire)
        XCTAssertTrue(wire.contains("Content-Length: \(announce.request.body.count)\r\n\r\nv=0\r\n"), wire)

        guard case .send(let setup) = try machine.receive(Fixtures.ok(1)) else { return XCTFail("no SETUP") }
        XCTAssertEqual(setup.method, "SETUP")
        XCTAssertEqual(
            setup.header("Transport"),
            "RTP/AVP/UDP;unicast;interleaved=0-1;mode=record;control_port=7001;timing_port=7002")
        guard
            case .send(let record) = try machine.receive(
                Fixtures.ok(2, [("Transport", Fixtures.transport), ("Session", "ABC")]))
        else { return XCTFail("no RECORD") }
        XCTAssertEqual(record.method, "RECORD")
        XCTAssertEqual(record.header("RTP-Info"), "seq=9;rtptime=1000")
        XCTAssertEqual(record.header("Session"), "ABC", "the speaker's session id is echoed")
        XCTAssertEqual(
            try machine.receive(Fixtures.ok(3, [("Audio-Latency", "11025")])),
            .startStreaming(SpeakerPorts(server: 6001, control: 6002, timing: 6003), latency: 11025))
        XCTAssertTrue(machine.isStreaming)

        let volume = try XCTUnwrap(machine.setVolume(decibels: -15))
        XCTAssertEqual(String(decoding: volume.request.body, as: UTF8.self), "volume: -15.0\r\n")
        XCTAssertNil(machine.pause(nextSequence: 1, nextTimestamp: 2), "one request at a time")
        XCTAssertEqual(try machine.receive(Fixtures.ok(4)), .volumeSet)

        let flush = try XCTUnwrap(machine.pause(nextSequence: 300, nextTimestamp: 4_000_000_000))
        XCTAssertEqual(flush.request.header("RTP-Info"), "seq=300;rtptime=4000000000")
        XCTAssertEqual(try machine.receive(Fixtures.ok(5)), .paused)
        XCTAssertTrue(machine.isPaused)
        XCTAssertNil(machine.pause(nextSequence: 1, nextTimestamp: 1), "no second FLUSH while paused")
        XCTAssertTrue(machine.resume())
        XCTAssertTrue(machine.isStreaming)

        let teardown = try XCTUnwrap(machine.stop())
        XCTAssertEqual(teardown.request.method, "TEARDOWN")
        XCTAssertEqual(try machine.receive(Fixtures.ok(6)), .closed)
        XCTAssertTrue(machine.isClosed)
        XCTAssertNil(machine.stop())
    }

    func testRefusalsAndMismatchesAreErrors() throws {
        var busy = Fixtures.machine()
        _ = busy.start()
        XCTAssertThrowsError(
            try busy.receive(RTSPResponse(status: 453, reason: "Not Enough Bandwidth", headers: [("CSeq", "1")]))
        ) {
            XCTAssertEqual(($0 as? RAOPError)?.code, .refused)
            XCTAssertEqual(($0 as? RAOPError)?.status, 453)
        }
        XCTAssertTrue(busy.isClosed)

        var wrong = Fixtures.machine()
        _ = wrong.start()
        XCTAssertThrowsError(try wrong.receive(Fixtures.ok(7))) {
            XCTAssertEqual(($0 as? RAOPError)?.code, .unexpectedResponse)
        }

        var unasked = Fixtures.machine()
        XCTAssertThrowsError(try unasked.receive(Fixtures.ok(1))) {
            XCTAssertEqual(($0 as? RAOPError)?.code, .unexpectedResponse)
        }

        var noPorts = Fixtures.machine()
        _ = noPorts.start()
        _ = try noPorts.receive(Fixtures.ok(1))
        XCTAssertThrowsError(
            try noPorts.receive(
                Fixtures.ok(2, [("Transport", "RTP/AVP/UDP;server_port=6001;control_port=0;timing_port=6003")]))
        ) {
            XCTAssertEqual(($0 as? RAOPError)?.code, .missingTransport)
        }
    }

    func testVolumeScaleNamesAndTimeline() {
        XCTAssertEqual(SpeakerVolume.decibels(forLevel: 1), 0)
        XCTAssertEqual(SpeakerVolume.decibels(forLevel: 0.5), -15)
        XCTAssertEqual(SpeakerVolume.decibels(forLevel: 0), -144)
        XCTAssertEqual(SpeakerVolume.decibels(forLevel: .nan), -144)

        XCTAssertEqual(SpeakerInstanceName("2D465926E33F@Kitchen Speaker").name, "Kitchen Speaker")
        XCTAssertEqual(SpeakerInstanceName("2d465926e33f@Kitchen").hardwareAddress, "2D465926E33F")
        XCTAssertEqual(SpeakerInstanceName("Not@hex name").name, "Not@hex name")
        XCTAssertNil(SpeakerInstanceName("2D465926E33F@").hardwareAddress)

        var timeline = StreamTimeline(rate: 44_100, firstTimestamp: UInt32.max - 10, startingAt: 1_000_000_000)
        XCTAssertEqual(timeline.timestamp(ofFrame: 352), 341, "RTP timestamps wrap")
        XCTAssertEqual(timeline.time(ofFrame: 44_100), 2_000_000_000)
        XCTAssertEqual(timeline.frame(at: 1_500_000_000), 22_050)
        XCTAssertEqual(timeline.frame(at: 999_999_999), -1, "never ahead of the clock")
        timeline.reanchor(frame: 88_200, at: 10_000_000_000)
        XCTAssertEqual(timeline.time(ofFrame: 88_200 + 4410), 10_100_000_000)
    }

    /// A group's scheduled start on a speaker: the timeline is anchored so that the frame asked for is heard at the
    /// instant, and every sync packet, read as shairport-sync reads it (its latency: timestamp − timestamp less
    /// latency + 11025 for the `0x0007` header; frame n heard at time + (n − timestamp + latency) / rate), says so,
    /// whenever it is sent and however the RTP timestamps wrap.
    func testSyncPacketsPutAScheduledFrameAtItsInstant() throws {
        let clock = SpeakerClock(wallNanoseconds: 1_700_000_000_000_000_000, monotonicNanoseconds: 5_000_000_000)
        var timeline = StreamTimeline(rate: 44_100, firstTimestamp: UInt32.max - 1000, startingAt: 5_000_000_000)
        let instant: Int64 = 9_123_456_789
        let frame: Int64 = 123_456
        timeline.reanchor(frame: frame, heardAt: instant, latency: 2_000_000_000)
        for now in [instant - 2_500_000_000, instant - 2_000_000_000, instant + 7_000_000_000] {
            let packet = timeline.sync(at: now, clock: clock, latencyFrames: 88_200, first: false)
            guard case .sync(let lessLatency, let time, let timestamp, _) = try SpeakerPacket.decode(packet.encoded)
            else { return XCTFail("not a sync: \(packet)") }
            let latency = Int64(timestamp &- lessLatency) + 11_025
            XCTAssertEqual(latency, 88_200)
            let ahead = Int64(Int32(bitPattern: timeline.timestamp(ofFrame: frame) &- timestamp))
            let heard = time.unixNanoseconds + (ahead + latency) * 1_000_000_000 / 44_100 - clock.offset
            XCTAssertEqual(Double(heard), Double(instant), accuracy: 23_000, "sent at \(now)")
        }
    }
}
