import CastSecurity
import CastSystem
import CastTestSupport
import Foundation
import XCTest

final class TLSConnectionTests: XCTestCase {
    func testRoundTripPinsKeysAgreesOnExporterAndEndsCleanly() throws {
        let (server, client) = try Fixtures.connectedPair()

        XCTAssertEqual(server.protocolVersion, "TLSv1.3")
        XCTAssertEqual(client.protocolVersion, "TLSv1.3")
        XCTAssertEqual(server.peerPublicKey, Fixtures.sender.publicKey)
        XCTAssertEqual(client.peerPublicKey, Fixtures.receiver.publicKey)

        let serverExport = try server.exportKeyingMaterial(label: "EXPORTER-cast-pairing", length: 32)
        let clientExport = try client.exportKeyingMaterial(label: "EXPORTER-cast-pairing", length: 32)
        XCTAssertEqual(serverExport, clientExport)
        XCTAssertEqual(serverExport.count, 32)
        XCTAssertNotEqual(try server.exportKeyingMaterial(label: "EXPORTER-other", length: 32), serverExport)

        try client.write(Array("hello receiver".utf8))
        XCTAssertEqual(try Self.readExactly(server, count: 14), Array("hello receiver".utf8))
        try server.write(Array("hello sender".utf8))
        XCTAssertEqual(try Self.readExactly(client, count: 12), Array("hello sender".utf8))

        client.close()
        XCTAssertEqual(try server.read(maxCount: 100, timeout: .seconds(2)), [], "close_notify reads as end of stream")
        client.close()  // idempotent
        server.close()
    }

    func testEachSessionExportsDifferentKeyingMaterial() throws {
        let first = try Fixtures.connectedPair()
        let second = try Fixtures.connectedPair()
        XCTAssertNotEqual(
            try first.client.exportKeyingMaterial(label: "EXPORTER-cast-pairing", length: 32),
            try second.client.exportKeyingMaterial(label: "EXPORTER-cast-pairing", length: 32))
    }

    func testLargeWritesArriveIntact() throws {
        let (server, client) = try Fixtures.connectedPair()
        let payload = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let reader = Background { try Self.readExactly(server, count: payload.count) }
        try client.write(payload)
        XCTAssertEqual(try reader.value(), payload)
    }

    /// A read takes every record that has arrived, not one 16 KiB record per call: a 256 KiB media answer is a few
    /// reads, not sixteen. And what a read returns after the peer closed is still delivered before the end.
    func testAReadTakesEveryRecordThatHasArrived() throws {
        let (server, client) = try Fixtures.connectedPair()
        let payload = (0..<(256 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try client.write(payload)
        client.shutdown()
        Thread.sleep(forTimeInterval: 0.2)  // everything is in the server's socket buffer
        var received: [UInt8] = []
        var reads = 0
        while true {
            let bytes = try server.read(maxCount: payload.count, timeout: .seconds(5))
            if bytes.isEmpty { break }
            received += bytes
            reads += 1
        }
        XCTAssertEqual(received, payload)
        XCTAssertLessThanOrEqual(reads, 2, "records per read: one per call would take 16 reads")
    }

    func testClientSpeakingHTTPFailsTheHandshakeQuickly() throws {
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listener.fd) }
        let client = try TCP.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(2))
        defer { close(client) }
        let request = Array("GET / HTTP/1.0\r\n\r\n".utf8)
        XCTAssertEqual(send(client, request, request.count, 0), request.count)

        let (fd, _) = try TCP.accept(listener.fd)
        var caught: SecurityError?
        let elapsed = Fixtures.seconds {
            do {
                _ = try TLSConnection.accept(fd: fd, identity: Fixtures.receiver, handshakeTimeout: .seconds(10))
            } catch { caught = error as? SecurityError }
        }
        XCTAssertEqual(caught?.kind, .tls, "\(String(describing: caught))")
        XCTAssertTrue(caught?.description.contains("SSL_do_handshake") ?? false, "\(String(describing: caught))")
        XCTAssertLessThan(elapsed, 1.0)
        XCTAssertEqual(fcntl(fd, F_GETFD), -1, "a failed handshake closes the descriptor it was given")
    }

    func testSilentClientTimesOutTheHandshake() throws {
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listener.fd) }
        let client = try TCP.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(2))
        defer { close(client) }

        let (fd, _) = try TCP.accept(listener.fd)
        var caught: SecurityError?
        let elapsed = Fixtures.seconds {
            do {
                _ = try TLSConnection.accept(fd: fd, identity: Fixtures.receiver, handshakeTimeout: .milliseconds(500))
            } catch { caught = error as? SecurityError }
        }
        XCTAssertEqual(caught?.kind, .timedOut, "\(String(describing: caught))")
        XCTAssertGreaterThanOrEqual(elapsed, 0.5)
        XCTAssertLessThan(elapsed, 3.0)
    }

    func testReadFromSilentPeerTimesOutAndTheConnectionStaysUsable() throws {
        let (server, client) = try Fixtures.connectedPair()
        var caught: SecurityError?
        let elapsed = Fixtures.seconds {
            do { _ = try client.read(maxCount: 100, timeout: .milliseconds(300)) } catch {
                caught = error as? SecurityError
            }
        }
        XCTAssertEqual(caught?.kind, .timedOut)
        XCTAssertGreaterThanOrEqual(elapsed, 0.3)
        XCTAssertLessThan(elapsed, 2.0)

        try server.write([1, 2, 3])
        XCTAssertEqual(try Self.readExactly(client, count: 3), [1, 2, 3])
    }

    func testShutdownWakesABlockedReader() throws {
        let (server, client) = try Fixtures.connectedPair()
        defer { withExtendedLifetime(server) {} }  // a released server would send close_notify and end the read
        let reader = Background { try client.read(maxCount: 100, timeout: nil) }
        Thread.sleep(forTimeInterval: 0.2)  // let the reader block in poll
        let elapsed = try Fixtures.seconds {
            client.shutdown()
            XCTAssertEqual(try reader.value(timeout: 2), [])
        }
        XCTAssertLessThan(elapsed, 1.0)
        client.shutdown()  // idempotent
    }

    func testCloseWakesABlockedReaderWithClosedError() throws {
        let (server, client) = try Fixtures.connectedPair()
        defer { withExtendedLifetime(server) {} }
        let reader = Background { try client.read(maxCount: 100, timeout: nil) }
        Thread.sleep(forTimeInterval: 0.2)
        client.close()
        XCTAssertThrowsError(try reader.value(timeout: 2)) { error in
            XCTAssertEqual((error as? SecurityError)?.kind, .closed, "\(error)")
        }
        XCTAssertThrowsError(try client.write([1])) { error in
            XCTAssertEqual((error as? SecurityError)?.kind, .closed)
        }
    }

    func testWritingToAVanishedPeerThrowsInsteadOfRaisingSIGPIPE() throws {
        let (server, client) = try Fixtures.connectedPair()
        server.close()
        // The first writes may land in the socket buffer; once the peer's RST is back, send fails with
        // EPIPE/ECONNRESET. Without MSG_NOSIGNAL this would kill the test process with SIGPIPE.
        var caught: SecurityError?
        for _ in 0..<1000 where caught == nil {
            do { try client.write([UInt8](repeating: 7, count: 16_384)) } catch { caught = error as? SecurityError }
            Thread.sleep(forTimeInterval: 0.001)
        }
        XCTAssertEqual(caught?.kind, .tls, "\(String(describing: caught))")
        XCTAssertNotNil(caught?.errno)
    }

    func testConcurrentReadsAndWritesInBothDirections() throws {
        let (server, client) = try Fixtures.connectedPair()
        let count = 1000
        let expected = (0..<count).flatMap(Self.message)

        // Each side reads on a background thread while the test writes on two more threads.
        let serverReader = Background { try Self.readExactly(server, count: expected.count) }
        let clientReader = Background { try Self.readExactly(client, count: expected.count) }
        let serverWriter = Background { for index in 0..<count { try server.write(Self.message(index)) } }
        let clientWriter = Background { for index in 0..<count { try client.write(Self.message(index)) } }

        try serverWriter.value(timeout: 30)
        try clientWriter.value(timeout: 30)
        XCTAssertEqual(try serverReader.value(timeout: 30), expected)
        XCTAssertEqual(try clientReader.value(timeout: 30), expected)
    }

    /// Message `index` of the stress test: its number, then 60 to 8,000 bytes derived from it, so that socket
    /// buffers fill up and both sides have to wait for writability while their readers are busy.
    private static func message(_ index: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) }
            + [UInt8](repeating: UInt8(index & 0xff), count: 60 + (index &* 7919) % 7940)
    }

    /// Reads until `count` bytes have arrived, failing on a premature end of stream.
    private static func readExactly(_ connection: TLSConnection, count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count {
            let chunk = try connection.read(maxCount: count - bytes.count, timeout: .seconds(10))
            if chunk.isEmpty { throw EndOfStream(received: bytes.count) }
            bytes += chunk
        }
        return bytes
    }

    private struct EndOfStream: Error { var received: Int }
}
