import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import XCTest

/// A man in the middle between the real `cast pair` and the real `castd` on loopback: it terminates
/// the sender's TLS with its own key, opens its own TLS to castd with another key, and forwards whole
/// frames both ways. It knows no PIN; the user types the right PIN into cast. Pairing must still fail,
/// because castd checks that the key in pairingStart is the key of its TLS peer, and both SRP proofs are
/// bound to the TLS session (the two legs of a relay export different keying material).
final class PairingRelayTests: XCTestCase {
    private var work: String!
    private var receiver: Daemon!
    private var port: UInt16 = 0
    private var relay: Relay?

    override func setUpWithError() throws {
        work = NSTemporaryDirectory() + "cast-relay-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        receiver = try Daemon(
            [
                Paths.castd, "--name", "Relay Target", "--listen", "127.0.0.1", "--port", "0", "--no-advertise",
                "--auth", "pin", "--audio-device", "none", "--video-out", "none", "--state-dir", state,
            ],
            environment: [:])
        let line = try XCTUnwrap(receiver.waitForLine(containing: "listening on port"), "\(receiver.output)")
        port = try XCTUnwrap(UInt16(line.split(separator: " ").drop { $0 != "port" }.dropFirst().first ?? ""), line)
    }

    override func tearDown() {
        relay?.stop()
        receiver?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    private var state: String { "\(work!)/state" }
    private var senderConfig: String { "\(work!)/sender" }

    /// `cast pair ADDRESS`, interactive: the PIN is typed on its standard input like a user would.
    private func startPair(_ address: String) throws -> Daemon {
        try Daemon([Paths.cast, "pair", address], environment: ["XDG_CONFIG_HOME": senderConfig], interactive: true)
    }

    private func pairedSenders() throws -> String {
        let list = try runCommand([Paths.castd, "--list-paired", "--state-dir", state], timeout: 20)
        XCTAssertEqual(list.status, 0, list.stderr)
        return list.stdout
    }

    /// Without the relay, the same cast, the same castd and the PIN castd shows pair at once: the relayed
    /// attempts failed because of the relay, not because of the PIN.
    private func assertDirectPairingSucceeds(file: StaticString = #filePath, line: UInt = #line) throws {
        let before = receiver.output.count
        let pair = try startPair("127.0.0.1:\(port)")
        defer { pair.stop() }
        let pinLine = try XCTUnwrap(
            receiver.waitForLine(containing: "Pairing PIN: ", timeout: 10, after: before), "\(receiver.output)",
            file: file, line: line)
        pair.type(String(pinLine.split(separator: " ").last ?? ""))
        XCTAssertEqual(pair.waitForExit(timeout: 20), 0, "\(pair.output)", file: file, line: line)
        XCTAssertTrue(
            pair.output.joined().contains("paired with Relay Target"), "\(pair.output)", file: file, line: line)
        let paired = try pairedSenders()
        XCTAssertEqual(paired.split(separator: "\n").count, 1, paired, file: file, line: line)
        // The pinned sender is cast's own key, never the relay's.
        let senderKey = try Identity.loadOrCreate(directory: "\(senderConfig)/cast").publicKey
        XCTAssertTrue(paired.hasPrefix(fingerprint(ofPublicKey: senderKey)), paired, file: file, line: line)
        let known = try KnownReceivers.load(directory: "\(senderConfig)/cast").list()
        XCTAssertEqual(known.count, 1, file: file, line: line)
    }

    /// Forwarding everything unchanged: castd sees the relay's TLS key but cast's key in pairingStart, and
    /// refuses at the start; no PIN is ever shown, so there is nothing for the user to type.
    func testUnmodifiedRelayIsRefusedAtTheStart() throws {
        let start = Date()
        let relay = try Relay(upstreamPort: port, rewriteStartKey: false)
        self.relay = relay
        let pair = try startPair("127.0.0.1:\(relay.port)")
        defer { pair.stop() }
        XCTAssertEqual(pair.waitForExit(timeout: 20), 4, "\(pair.output)")
        XCTAssertTrue(pair.output.joined().contains("not the key of this TLS connection"), "\(pair.output)")
        XCTAssertNotNil(
            receiver.waitForLine(containing: "not the key of this TLS connection", timeout: 5), "\(receiver.output)")
        XCTAssertFalse(receiver.output.contains { $0.contains("Pairing PIN:") }, "no PIN for a refused start")

        // The relay did its job: it forwarded the start and the refusal, and nothing else happened.
        let seen = relay.forwarded
        XCTAssertEqual(seen.map(\.description), ["→ pairingStart", "← pairingFailure"])
        XCTAssertEqual(relay.failures.map(\.reason), [.notAccepted])

        XCTAssertTrue(try pairedSenders().contains("no paired senders"))
        XCTAssertEqual(try KnownReceivers.load(directory: "\(senderConfig)/cast").list(), [])
        try assertDirectPairingSucceeds()
        print(
            "PairingRelayTests: unmodified relay refused; total \(String(format: "%.2f", Date().timeIntervalSince(start))) s"
        )
    }

    /// The relay puts its own key into pairingStart so castd accepts the start and shows a PIN; the user
    /// types that right PIN into cast; SRP runs end to end through the relay and fails at castd's proof
    /// check, because cast's proof is bound to the cast–relay TLS session and castd's to the relay–castd one.
    func testRelayRewritingTheStartKeyFailsAtTheProof() throws {
        let start = Date()
        let relay = try Relay(upstreamPort: port, rewriteStartKey: true)
        self.relay = relay
        let before = receiver.output.count
        let pair = try startPair("127.0.0.1:\(relay.port)")
        defer { pair.stop() }
        let pinLine = try XCTUnwrap(
            receiver.waitForLine(containing: "Pairing PIN: ", timeout: 10, after: before), "\(receiver.output)")
        let pin = String(pinLine.split(separator: " ").last ?? "")
        XCTAssertEqual(pin.count, 4, pinLine)
        pair.type(pin)  // the RIGHT PIN

        XCTAssertEqual(pair.waitForExit(timeout: 20), 4, "\(pair.output)")
        XCTAssertTrue(pair.output.joined().contains("wrong PIN"), "\(pair.output)")
        XCTAssertNotNil(
            receiver.waitForLine(containing: "wrong PIN or a relayed session", timeout: 5, after: before),
            "\(receiver.output)")

        // The full SRP exchange went through the relay, unchanged but for the key in pairingStart.
        XCTAssertEqual(
            relay.forwarded.map(\.description),
            ["→ pairingStart", "← pairingChallenge", "→ pairingProof", "← pairingFailure"])
        XCTAssertEqual(relay.failures.map(\.reason), [.authenticationFailed])

        XCTAssertTrue(try pairedSenders().contains("no paired senders"))
        XCTAssertEqual(try KnownReceivers.load(directory: "\(senderConfig)/cast").list(), [])

        Thread.sleep(forTimeInterval: 1.2)  // the backoff after one wrong proof (1 s)
        try assertDirectPairingSucceeds()
        print(
            "PairingRelayTests: rewriting relay failed at the proof; total \(String(format: "%.2f", Date().timeIntervalSince(start))) s"
        )
    }
}

/// One man-in-the-middle relay: accepts one sender, terminates its TLS with `downstreamIdentity`, connects
/// to castd with `upstreamIdentity`, and forwards whole frames both ways (decoded, then re-encoded
/// byte-identical). Optionally replaces the public key in pairingStart by `upstreamIdentity`'s.
final class Relay: @unchecked Sendable {
    // Invariant: `lock` guards `log`, `failureLog`, `connections` and `stopped`; the rest is immutable.
    struct Forwarded: CustomStringConvertible {
        var upstream: Bool
        var type: UInt8
        var description: String {
            let name = MessageType(rawValue: type).map { "\($0)" } ?? "type \(type)"
            return (upstream ? "→ " : "← ") + name
        }
    }

    let port: UInt16
    private let listenFD: Int32
    private let upstreamPort: UInt16
    private let rewriteStartKey: Bool
    private let downstreamIdentity: Identity
    private let upstreamIdentity: Identity
    private let lock = NSLock()
    private var log: [Forwarded] = []
    private var failureLog: [PairingFailure] = []
    private var connections: [TLSConnection] = []
    private var stopped = false

    init(upstreamPort: UInt16, rewriteStartKey: Bool) throws {
        self.upstreamPort = upstreamPort
        self.rewriteStartKey = rewriteStartKey
        downstreamIdentity = try Identity.ephemeral()
        upstreamIdentity = try Identity.ephemeral()
        (listenFD, port) = try TCP.listen(host: "127.0.0.1", port: 0)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    var forwarded: [Forwarded] { lock.withLock { log } }
    var failures: [PairingFailure] { lock.withLock { failureLog } }

    func stop() {
        let open: [TLSConnection] = lock.withLock {
            stopped = true
            return connections
        }
        Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
        for connection in open { connection.shutdown() }
        for connection in open { connection.close() }
        close(listenFD)
    }

    private func acceptLoop() {
        while let accepted = try? TCP.accept(listenFD) {
            let fd = accepted.fd
            if lock.withLock({ stopped }) {
                close(fd)
                return
            }
            Thread.detachNewThread { [self] in relay(fd) }
        }
    }

    private func relay(_ fd: Int32) {
        guard
            let downstream = try? TLSConnection.accept(
                fd: fd, identity: downstreamIdentity, handshakeTimeout: .seconds(5))
        else { return }
        guard let upstreamFD = try? TCP.connect(host: "127.0.0.1", port: upstreamPort, timeout: .seconds(5)),
            let upstream = try? TLSConnection.connect(
                fd: upstreamFD, identity: upstreamIdentity, handshakeTimeout: .seconds(5))
        else {
            downstream.close()
            return
        }
        lock.withLock { connections += [downstream, upstream] }
        Thread.detachNewThread { [self] in pump(from: upstream, to: downstream, towardsReceiver: false) }
        pump(from: downstream, to: upstream, towardsReceiver: true)
    }

    /// Copies frames until either side ends, then ends the other side too.
    private func pump(from source: TLSConnection, to destination: TLSConnection, towardsReceiver: Bool) {
        defer {
            source.shutdown()
            destination.shutdown()
        }
        var decoder = FrameDecoder()
        while true {
            guard let bytes = try? source.read(maxCount: 65536, timeout: nil), !bytes.isEmpty else { return }
            decoder.feed(bytes)
            while true {
                let next: Frame?
                do { next = try decoder.nextFrame() } catch { return }
                guard var frame = next else { break }
                if let message = try? Message(frame) {
                    switch message {
                    case .pairing(.start(var start)) where rewriteStartKey && towardsReceiver:
                        start.publicKey = upstreamIdentity.publicKey
                        frame = Message.pairing(.start(start)).frame()
                    case .pairing(.failure(let failure)):
                        lock.withLock { failureLog.append(failure) }
                    default:
                        break
                    }
                }
                lock.withLock { log.append(Forwarded(upstream: towardsReceiver, type: frame.type)) }
                guard (try? destination.write(frame.encoded(), timeout: .seconds(5))) != nil else { return }
            }
        }
    }
}
