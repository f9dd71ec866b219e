import CastSystem
import CastTestSupport
import Foundation
import XCTest

final class TCPTests: XCTestCase {
    func testListenOnAnyPortAcceptsAndReportsThePeerAddress() throws {
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listener.fd) }
        XCTAssertNotEqual(listener.port, 0)

        let accepted = Background { try TCP.accept(listener.fd) }
        let client = try TCP.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(2))
        defer { close(client) }
        let (server, peer) = try accepted.value()
        defer { close(server) }

        XCTAssertTrue(peer.hasPrefix("127.0.0.1:"), peer)
        XCTAssertEqual(send(client, "x", 1, 0), 1)
        var byte: UInt8 = 0
        XCTAssertEqual(recv(server, &byte, 1, 0), 1)
        XCTAssertEqual(byte, UInt8(ascii: "x"))
        XCTAssertEqual(fcntl(server, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
        XCTAssertEqual(fcntl(client, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
        XCTAssertEqual(fcntl(client, F_GETFL) & O_NONBLOCK, 0, "connect must return a blocking descriptor")
    }

    func testAcceptedConnectionsDetectVanishedPeersWithKeepalive() throws {
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listener.fd) }
        let accepted = Background { try TCP.accept(listener.fd) }
        let client = try TCP.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(2))
        defer { close(client) }
        let (server, _) = try accepted.value()
        defer { close(server) }
        func option(_ level: Int32, _ name: Int32) -> Int32 {
            var value: Int32 = -1
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(server, level, name, &value, &length)
            return value
        }
        XCTAssertEqual(option(SOL_SOCKET, SO_KEEPALIVE), 1)
        XCTAssertEqual(option(Int32(IPPROTO_TCP), TCP_KEEPIDLE), 30)
        XCTAssertEqual(option(Int32(IPPROTO_TCP), TCP_KEEPINTVL), 10)
        XCTAssertEqual(option(Int32(IPPROTO_TCP), TCP_KEEPCNT), 3)
    }

    func testIPv6PeerAddressIsBracketed() throws {
        let listener: (fd: Int32, port: UInt16)
        do { listener = try TCP.listen(host: "::1", port: 0) } catch { throw XCTSkip("no IPv6 loopback: \(error)") }
        defer { close(listener.fd) }

        let accepted = Background { try TCP.accept(listener.fd) }
        let client = try TCP.connect(host: "::1", port: listener.port, timeout: .seconds(2))
        defer { close(client) }
        let (server, peer) = try accepted.value()
        defer { close(server) }
        XCTAssertTrue(peer.hasPrefix("[::1]:"), peer)
    }

    func testConnectionRefusedCarriesErrnoAndFunction() throws {
        // Bind a port, then close it, so that nothing listens there.
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        close(listener.fd)

        XCTAssertThrowsError(try TCP.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(2))) { error in
            let error = error as? SecurityError
            XCTAssertEqual(error?.kind, .system)
            XCTAssertEqual(error?.errno, ECONNREFUSED)
            XCTAssertEqual(error?.function, "connect")
        }
    }

    func testListeningTwiceOnTheSamePortFails() throws {
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listener.fd) }
        XCTAssertThrowsError(try TCP.listen(host: "127.0.0.1", port: listener.port)) { error in
            XCTAssertEqual((error as? SecurityError)?.errno, EADDRINUSE)
        }
    }
}
