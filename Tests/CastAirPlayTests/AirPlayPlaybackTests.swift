import Foundation
import XCTest

@testable import CastAirPlay

final class AirPlayPlaybackTests: XCTestCase {
    /// The body read back the way pyatv reads it (any property list, keys and values).
    private func decoded(_ playback: AirPlayPlayback) throws -> [String: Any] {
        let body = playback.playbackInfoBody()
        XCTAssertTrue(body.starts(with: Array("bplist00".utf8)))
        return try XCTUnwrap(
            try PropertyListSerialization.propertyList(from: Data(body), options: [], format: nil) as? [String: Any])
    }

    func testIdleAndLoadingHaveNoDuration() throws {
        // pyatv: no duration = not (or no longer) playing.
        for playback in [AirPlayPlayback.idle, .loading] {
            let info = try decoded(playback)
            XCTAssertNil(info["duration"], "\(playback)")
            XCTAssertNil(info["error"])
            XCTAssertEqual(info["readyToPlay"] as? Bool, false)
            XCTAssertEqual(PropertyList.number(info["rate"]), 0)
            XCTAssertEqual((info["loadedTimeRanges"] as? [Any])?.count, 0)
        }
    }

    func testPlayingShape() throws {
        let info = try decoded(.active(duration: 5, position: 1.5, rate: 1, stalled: false))
        XCTAssertEqual(PropertyList.number(info["duration"]), 5)
        XCTAssertEqual(PropertyList.number(info["position"]), 1.5)
        XCTAssertEqual(PropertyList.number(info["rate"]), 1)
        XCTAssertEqual(info["readyToPlay"] as? Bool, true)
        XCTAssertEqual(info["playbackBufferEmpty"] as? Bool, false)
        XCTAssertEqual(info["playbackBufferFull"] as? Bool, true)
        XCTAssertEqual(info["playbackLikelyToKeepUp"] as? Bool, true)
        let ranges = try XCTUnwrap(info["seekableTimeRanges"] as? [[String: Any]])
        XCTAssertEqual(ranges.count, 1)
        XCTAssertEqual(PropertyList.number(ranges[0]["start"]), 0)
        XCTAssertEqual(PropertyList.number(ranges[0]["duration"]), 5)
        XCTAssertEqual((info["loadedTimeRanges"] as? [Any])?.count, 1)
        XCTAssertNil(info["error"])

        let paused = try decoded(.active(duration: 5, position: 2, rate: 0, stalled: true))
        XCTAssertEqual(PropertyList.number(paused["rate"]), 0)
        XCTAssertEqual(paused["playbackBufferEmpty"] as? Bool, true)
        XCTAssertEqual(paused["playbackLikelyToKeepUp"] as? Bool, false)
    }

    func testFailureCarriesAnErrorPyatvCanRead() throws {
        let info = try decoded(.failed("HTTP error 404 Not Found"))
        XCTAssertNil(info["duration"])
        let error = try XCTUnwrap(info["error"] as? [String: Any])
        XCTAssertEqual(PropertyList.number(error["code"]), -1)
        XCTAssertEqual(error["domain"] as? String, "castd")
        XCTAssertEqual(error["localizedDescription"] as? String, "HTTP error 404 Not Found")
    }

    func testScrubText() {
        XCTAssertEqual(
            AirPlayPlayback.active(duration: 83.124794, position: 14.467, rate: 1, stalled: false).scrubText,
            "duration: 83.124794\nposition: 14.467000")
        XCTAssertEqual(AirPlayPlayback.idle.scrubText, "duration: 0.000000\nposition: 0.000000")
        XCTAssertEqual(AirPlayPlayback.sixDecimals(.nan), "0.000000")
    }

    func testDeviceIDTXTAndServerInfo() throws {
        let device = AirPlayDevice(receiverID: "0123456789abcdef0123456789abcdef")
        // 0x01 → locally administered (bit 1 set), unicast (bit 0 clear): 0x02.
        XCTAssertEqual(device.deviceID, "02:23:45:67:89:AB")
        XCTAssertEqual(
            device.txt, ["deviceid": "02:23:45:67:89:AB", "features": "0x3", "model": "Castd1,1", "srcvers": "220.68"])
        XCTAssertNil(device.txt["ft"])
        let features = try XCTUnwrap(UInt64(try XCTUnwrap(device.txt["features"]).dropFirst(2), radix: 16))
        for bit in [38, 43, 48, 30] { XCTAssertEqual(features & (1 << UInt64(bit)), 0, "bit \(bit)") }
        // Video and photo; no slideshow (bit 5).
        XCTAssertEqual(features & 0b10_0011, 0b11)
        XCTAssertEqual(AirPlayDevice(receiverID: "kitchen").deviceID.count, 17)

        let info = try XCTUnwrap(
            try PropertyListSerialization.propertyList(from: Data(device.serverInfoBody()), options: [], format: nil)
                as? [String: Any])
        XCTAssertEqual(info["deviceid"] as? String, "02:23:45:67:89:AB")
        XCTAssertEqual(PropertyList.number(info["features"]), 3)
        XCTAssertEqual(info["model"] as? String, "Castd1,1")
        XCTAssertEqual(info["protocolVersion"] as? String, "1.0")
        XCTAssertEqual(info["srcvers"] as? String, "220.68")
    }
}
