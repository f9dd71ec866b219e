import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import XCTest

/// Text a receiver sends reaches `cast`'s terminal escaped (issue #29): a receiver on loopback (this test, speaking
/// the protocol with a key of its own and `auth none`) answers `cast status` with an id holding a terminal escape and
/// a bell. `cast` prints it escaped, on one line, and writes no control character.
final class ReceiverTextTests: XCTestCase {
    func testAStatusIdCannotDriveTheTerminal() throws {
        let identity = try Identity.ephemeral()
        let (listenFD, port) = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listenFD) }
        let forged = "\u{1B}]0;owned\u{7}\u{1B}[2J"
        let served = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { served.signal() }
            guard let accepted = try? TCP.accept(listenFD),
                let tls = try? TLSConnection.accept(fd: accepted.fd, identity: identity, handshakeTimeout: .seconds(10))
            else { return }
            defer { tls.close() }
            var decoder = FrameDecoder()
            while let bytes = try? tls.read(maxCount: 65536, timeout: .seconds(10)), !bytes.isEmpty {
                decoder.feed(bytes)
                while let frame = try? decoder.nextFrame(), let message = try? Message(frame) {
                    let reply: Message
                    switch message {
                    case .hello:
                        reply = .welcome(
                            Welcome(name: "Fake", id: fingerprint(ofPublicKey: identity.publicKey), auth: "none"))
                    case .statusRequest:
                        reply = .status(ReceiverStatus(name: "Fake", id: forged, state: .stopped))
                    default:
                        return  // a time request: the clock is not measured, and that is said
                    }
                    guard (try? tls.write(reply.frame().encoded(), timeout: .seconds(5))) != nil else { return }
                }
            }
        }
        let work = NSTemporaryDirectory() + "cast-rtext-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try runCommand(
            [Paths.cast, "status", "127.0.0.1:\(port)"], environment: ["XDG_CONFIG_HOME": work], timeout: 30)
        _ = served.wait(timeout: .now() + 10)
        print(
            "cast status of a receiver whose id is a terminal escape: exit \(result.status): \(result.stdout.debugDescription)"
        )
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains(#"id: \u{1B}]0;owned\u{7}\u{1B}[2J"#), result.stdout)
        let controls = (result.stdout + result.stderr).unicodeScalars.filter {
            $0.properties.generalCategory == .control && $0 != "\n"
        }
        XCTAssertEqual(controls.count, 0, "control characters reached the terminal: \(result.stdout.debugDescription)")
    }
}
