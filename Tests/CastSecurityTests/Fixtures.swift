import CastSecurity
import CastSystem
import CastTestSupport
import Foundation
import XCTest

/// Shared set-up for the CastSecurity tests.
enum Fixtures {
    /// A fresh empty directory under the system temporary directory, removed when the test ends.
    static func temporaryDirectory(_ test: XCTestCase) throws -> String {
        try TemporaryDirectory.make(for: test, prefix: "cast-security")
    }

    /// What OpenSSL's own tool prints for `arguments`, with `input` on its standard input; fails the test on a
    /// non-zero exit.
    static func openssl(_ arguments: [String], input: Data? = nil) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        let feed = Pipe()
        if input != nil { process.standardInput = feed }
        try process.run()
        if let input {
            feed.fileHandleForWriting.write(input)
            try feed.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "openssl \(arguments)")
        return data
    }

    /// Two identities that live only in memory, made once for the whole test run (key generation is cheap,
    /// but `SSL_CTX_new` is not).
    static let receiver = try! Identity.ephemeral()
    static let sender = try! Identity.ephemeral()

    /// A TLS connection pair over real loopback TCP: `server` accepted with `receiver`, `client` connected
    /// with `sender`.
    static func connectedPair(handshakeTimeout: Duration = .seconds(5)) throws -> (
        server: TLSConnection, client: TLSConnection
    ) {
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listener.fd) }
        let server = Background {
            let (fd, _) = try TCP.accept(listener.fd)
            return try TLSConnection.accept(fd: fd, identity: receiver, handshakeTimeout: handshakeTimeout)
        }
        let fd = try TCP.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let client = try TLSConnection.connect(fd: fd, identity: sender, handshakeTimeout: handshakeTimeout)
        return (try server.value(), client)
    }

    /// Seconds elapsed while running `body`.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}

/// Checks that `body` throws a `SecurityError` of `kind` whose description contains each of `parts` (the path, the
/// fix: what the user reads).
func assertThrows(
    _ kind: SecurityError.Kind, containing parts: [String], line: UInt = #line, _ body: () throws -> Void
) {
    XCTAssertThrowsError(try body(), line: line) { error in
        let error = error as? SecurityError
        XCTAssertEqual(error?.kind, kind, "\(String(describing: error))", line: line)
        for part in parts {
            XCTAssertTrue(error?.description.contains(part) ?? false, "\(String(describing: error))", line: line)
        }
    }
}
