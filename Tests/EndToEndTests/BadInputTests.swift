import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import XCTest

/// Hostile and broken peers against a real castd on loopback (no mDNS needed: `--no-advertise`).
/// Each must be closed with a logged reason in bounded time, leaving the daemon serving others.
final class BadInputTests: XCTestCase {
    private var daemon: Daemon!
    private var port: UInt16 = 0
    private var dirs: [String] = []
    private var identity: Identity!

    override func setUpWithError() throws {
        let state = NSTemporaryDirectory() + "castd-bad-\(UUID().uuidString)"
        let sender = NSTemporaryDirectory() + "cast-bad-\(UUID().uuidString)"
        dirs = [state, sender]
        identity = try Identity.loadOrCreate(directory: sender)
        daemon = try Daemon(
            [
                Paths.castd, "--name", "Bad Input", "--auth", "none", "--port", "0", "--listen", "127.0.0.1",
                "--no-advertise", "--video-out", "none", "--state-dir", state,
            ], environment: [:])
        let line = try XCTUnwrap(daemon.waitForLine(containing: "listening on port"), "\(daemon.output)")
        port = try XCTUnwrap(UInt16(line.split(separator: " ").drop { $0 != "port" }.dropFirst().first ?? ""))
    }

    override func tearDown() {
        daemon?.stop()
        for dir in dirs { try? FileManager.default.removeItem(atPath: dir) }
    }

    private func connectTLS() throws -> TLSConnection {
        let fd = try TCP.connect(host: "127.0.0.1", port: port, timeout: .seconds(2))
        return try TLSConnection.connect(fd: fd, identity: identity, handshakeTimeout: .seconds(2))
    }

    /// Reads until the daemon closes; returns the messages it sent and the time it took.
    private func drain(_ tls: TLSConnection, timeout: Double = 15) -> ([Message], Double) {
        let start = Date()
        var decoder = FrameDecoder()
        var messages: [Message] = []
        while Date().timeIntervalSince(start) < timeout {
            guard let bytes = try? tls.read(maxCount: 65536, timeout: .seconds(1)) else {
                if Date().timeIntervalSince(start) >= timeout { break }
                continue
            }
            if bytes.isEmpty { break }
            decoder.feed(bytes)
            while let frame = try? decoder.nextFrame(), let message = try? Message(frame) { messages.append(message) }
        }
        return (messages, Date().timeIntervalSince(start))
    }

    private func hello(_ tls: TLSConnection) throws {
        try tls.write(Message.hello(Hello(name: "test", software: "BadInputTests")).frame().encoded())
    }

    private func assertClosed(with code: ErrorCode, _ tls: TLSConnection, within seconds: Double, line: UInt = #line) {
        let (messages, elapsed) = drain(tls)
        guard case .error(let error)? = messages.last else {
            return XCTFail("expected an error message, got \(messages)", line: line)
        }
        XCTAssertEqual(error.code, code, line: line)
        XCTAssertLessThan(elapsed, seconds, line: line)
        XCTAssertNotNil(
            daemon.waitForLine(containing: code.rawValue, timeout: 2), "no log line for \(code)", line: line)
    }

    /// The daemon is still up and answers a well-behaved sender.
    private func assertStillServing(line: UInt = #line) throws {
        XCTAssertTrue(daemon.isRunning, line: line)
        let tls = try connectTLS()
        try hello(tls)
        try tls.write(Message.statusRequest.frame().encoded())
        var decoder = FrameDecoder()
        var messages: [Message] = []
        while messages.count < 2 {
            let bytes = try tls.read(maxCount: 65536, timeout: .seconds(5))
            XCTAssertFalse(bytes.isEmpty, line: line)
            if bytes.isEmpty { return }
            decoder.feed(bytes)
            while let frame = try decoder.nextFrame() { messages.append(try Message(frame)) }
        }
        guard case .status(let status) = messages[1] else { return XCTFail("\(messages)", line: line) }
        XCTAssertEqual(status.state, .stopped, line: line)
        tls.close()
    }

    func testGarbageInsteadOfTLSIsClosed() throws {
        let fd = try TCP.connect(host: "127.0.0.1", port: port, timeout: .seconds(2))
        defer { close(fd) }
        let garbage =
            Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8) + (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        _ = garbage.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let start = Date()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while recv(fd, &buffer, buffer.count, 0) > 0 {}
        XCTAssertLessThan(Date().timeIntervalSince(start), 3)
        XCTAssertNotNil(daemon.waitForLine(containing: "TLS handshake failed", timeout: 2), "\(daemon.output)")
        try assertStillServing()
    }

    func testSilentClientIsClosedAfterTheHandshakeTimeout() throws {
        let fd = try TCP.connect(host: "127.0.0.1", port: port, timeout: .seconds(2))
        defer { close(fd) }
        let start = Date()
        var buffer = [UInt8](repeating: 0, count: 64)
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let n = recv(fd, &buffer, buffer.count, 0)
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertLessThanOrEqual(n, 0)
        XCTAssertGreaterThan(elapsed, 4)
        XCTAssertLessThan(elapsed, 8)
        XCTAssertNotNil(daemon.waitForLine(containing: "TLS handshake failed", timeout: 2))
        try assertStillServing()
    }

    func testTwoGibibyteLengthPrefixIsRefused() throws {
        let tls = try connectTLS()
        try hello(tls)
        try tls.write([0x80, 0, 0, 0, 1, 2, 3])
        assertClosed(with: .frameTooLarge, tls, within: 3)
        try assertStillServing()
    }

    func testUnknownMessageTypeIsRefused() throws {
        let tls = try connectTLS()
        try hello(tls)
        try tls.write(Frame(type: 250, payload: Array("{}".utf8)).encoded())
        assertClosed(with: .unknownMessageType, tls, within: 3)
        try assertStillServing()
    }

    func testMessageBeforeHelloIsRefused() throws {
        let tls = try connectTLS()
        try tls.write(Message.statusRequest.frame().encoded())
        assertClosed(with: .unexpectedMessage, tls, within: 3)
        try assertStillServing()
    }

    func testPeerStallingMidFrameIsClosed() throws {
        let tls = try connectTLS()
        try hello(tls)
        try tls.write([0, 0, 0, 100, 3])  // promises 100 bytes, sends 1
        let (messages, elapsed) = drain(tls)
        guard case .error(let error)? = messages.last else { return XCTFail("\(messages)") }
        XCTAssertEqual(error.code, .timeout)
        XCTAssertGreaterThan(elapsed, 4)
        XCTAssertLessThan(elapsed, 9)
        try assertStillServing()
    }

    func testNoHelloInTimeIsClosed() throws {
        let tls = try connectTLS()
        let (messages, elapsed) = drain(tls)
        guard case .error(let error)? = messages.last else { return XCTFail("\(messages)") }
        XCTAssertEqual(error.code, .timeout)
        XCTAssertLessThan(elapsed, 9)
    }

    func testManyBadConnectionsDoNotGrowMemory() throws {
        func rss() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        // Warm up: the first connections allocate what the daemon keeps (thread stacks, TLS context).
        for _ in 0..<20 { try garbageConnection() }
        Thread.sleep(forTimeInterval: 0.5)
        let before = rss()
        for _ in 0..<200 { try garbageConnection() }
        for _ in 0..<50 {
            let tls = try connectTLS()
            try hello(tls)
            try tls.write([0x7F, 0xFF, 0xFF, 0xFF])
            _ = drain(tls)
        }
        Thread.sleep(forTimeInterval: 0.5)
        let after = rss()
        print("castd RSS before \(before) kB, after 250 bad connections \(after) kB")
        XCTAssertLessThan(after - before, 8 * 1024, "RSS grew from \(before) kB to \(after) kB")
        try assertStillServing()
    }

    private func garbageConnection() throws {
        let fd = try TCP.connect(host: "127.0.0.1", port: port, timeout: .seconds(2))
        let junk: [UInt8] = Array(repeating: 0x16, count: 5) + Array(repeating: 0xFF, count: 300)
        _ = junk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 512)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while recv(fd, &buffer, buffer.count, 0) > 0 {}
        close(fd)
    }
}
