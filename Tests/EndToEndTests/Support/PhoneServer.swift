import CastTestSupport
import Foundation
import XCTest

extension Lab {
    /// An http server on the phone for the files of `folder` (Tests/Fixtures/media_server.py: ranges, and with `auth`
    /// `USER:PASS` basic authentication); its base URL, `http://ADDR:PORT`.
    func serveOnPhone(_ folder: String = Media.folder.path, auth: String? = nil) throws -> String {
        let server = try start(on: .phone, ["python3", URLTests.serverScript, folder, "0"] + (auth.map { [$0] } ?? []))
        let line = try XCTUnwrap(server.waitForLine(containing: "port "), "\(server.output)")
        let port = try XCTUnwrap(line.split(separator: " ").last.map(String.init))
        return "http://\(address(.phone)):\(port)"
    }

    /// castd recording what it plays (`startRecordingReceiver`) with AirPlay video on a free port, once it advertises
    /// `_airplay._tcp`: the daemon, its AirPlay port and the `deviceid` it logs.
    func startAirPlayReceiver(work: String, extra: [String] = []) throws -> (
        daemon: Daemon, port: UInt16, deviceID: String
    ) {
        let (receiver, _) = try startRecordingReceiver(
            work: work, extra: ["--airplay-video", "--airplay-port", "0"] + extra)
        let line = try XCTUnwrap(receiver.waitForLine(containing: "AirPlay video on port"), "\(receiver.output)")
        let words = line.split(separator: " ")
        let port = try XCTUnwrap(words.drop { $0 != "port" }.dropFirst().first.flatMap { UInt16($0) }, line)
        let deviceID = try XCTUnwrap(
            words.drop { $0 != "(deviceid" }.dropFirst().first.map { String($0.dropLast(2)) }, line)
        XCTAssertNotNil(receiver.waitForLine(containing: "(_airplay._tcp) on mDNS"), "\(receiver.output)")
        return (receiver, port, deviceID)
    }
}
