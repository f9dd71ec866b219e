import CastProtocol
import CastSecurity
import CastSystem
import CastTestSupport
import Foundation
import XCTest

/// Load against a real castd on loopback (`--auth password`, so that clients pair for real without a PIN to read):
/// many paired clients sending controls and status requests while a movie plays, and a flood of strangers.
///
/// `CAST_LOAD_SECONDS` sets how long the clients run (10 s by default here; `scripts/bench-load` runs 60 s).
/// `CAST_LOAD_MOVIE=0` runs the clients with the movie paused: no media work (`scripts/bench` measures both).
final class LoadTests: XCTestCase {
    private var daemon: Daemon!
    private var port: UInt16 = 0
    private var work: String!
    private let password = "load test secret"

    override func setUpWithError() throws {
        work = NSTemporaryDirectory() + "cast-load-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: "\(work!)/password"))
        XCTAssertEqual(chmod("\(work!)/password", 0o600), 0)
        daemon = try Daemon(
            [
                Paths.castd, "--name", "Load", "--auth", "password", "--password-file", "\(work!)/password", "--port",
                "0",
                "--listen", "127.0.0.1", "--no-advertise", "--video-out", "none", "--audio-device", "none",
                "--state-dir", "\(work!)/state",
            ], environment: [:])
        port = try daemon.listeningPort()
    }

    override func tearDown() {
        daemon?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    private var target: String { "127.0.0.1:\(port)" }

    /// Pairs the sender whose config lives in `work/name` (with `cast pair` and the password).
    private func pair(_ name: String) throws -> String {
        let home = "\(work!)/\(name)"
        let result = try runCommand(
            [Paths.cast, "pair", target, "--pin", password], environment: ["XDG_CONFIG_HOME": home], timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        return home + "/cast"
    }

    /// 20 paired clients, each watching the receiver, for `CAST_LOAD_SECONDS`: each sets the volume to a level no
    /// one else uses and waits for that `volume` event, then asks for the status and waits for it, then pauses
    /// 100 ms. Every control gets its event (none lost) and castd and the movie survive. The goal (p99 from a
    /// control to its event within 50 ms) is printed and measured on a quiet machine (docs/benchmarks.md); on a loaded
    /// CI machine the p99 reached 56 ms, so the test bounds only a stall: no control waits a second for its event.
    func testTwentyPairedClientsGetEveryEventWhileAMoviePlays() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["CAST_LOAD_SECONDS"] ?? "") ?? 10
        let clients = 20
        let pairStart = Date()
        let owner = try pair("owner")
        _ = owner
        let homes = try (0..<clients).map { try pair("client\($0)") }
        print("paired \(clients + 1) senders in \(String(format: "%.1f", Date().timeIntervalSince(pairStart))) s")
        let movie = ProcessInfo.processInfo.environment["CAST_LOAD_MOVIE"] != "0"
        let clip = try Media.clip("load-\(Int(seconds)).mp4", seconds: Int(seconds) + 15)
        let sender = try Daemon(
            [Paths.cast, "send", clip, "--to", target, "--json"], environment: ["XDG_CONFIG_HOME": "\(work!)/owner"])
        defer { sender.stop() }
        XCTAssertNotNil(sender.waitForLine(containing: "\"position\"", timeout: 15), "\(sender.output)")
        if !movie {
            // Controls need a session: an idle receiver here is one whose movie is paused (no media work).
            let pause = try runCommand(
                [Paths.cast, "pause", target], environment: ["XDG_CONFIG_HOME": "\(work!)/owner"])
            XCTAssertEqual(pause.status, 0)
            XCTAssertNotNil(sender.waitForLine(containing: "\"paused\"", timeout: 5), "\(sender.output)")
        }

        let results = LoadResults()
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        for (index, home) in homes.enumerated() {
            group.enter()
            let thread = Thread { [port] in
                defer { group.leave() }
                do {
                    let client = try PairedClient(port: port, configDirectory: home, name: "load \(index)")
                    defer { client.close() }
                    try client.send(.watch)
                    _ = try client.waitFor(within: 5) { if case .status = $0 { true } else { false } }
                    var n = 0
                    while Date() < deadline {
                        // Unique across clients and rounds, so each client waits for its own event.
                        let level = Double(index * 100_000 + n + 1) / 10_000_000
                        n += 1
                        let sent = ContinuousClock.now
                        try client.send(.control(PlaybackControl(.volume(level))))
                        let heard = try client.waitFor(within: 5) { message in
                            if case .event(.volume(let value, _)) = message { return abs(value - level) < 1e-12 }
                            return false
                        }
                        if heard { results.event(ContinuousClock.now - sent) } else { results.lost() }
                        let asked = ContinuousClock.now
                        try client.send(.statusRequest)
                        if try client.waitFor(within: 5, { if case .status = $0 { true } else { false } }) {
                            results.status(ContinuousClock.now - asked)
                        } else {
                            results.lost()
                        }
                        Thread.sleep(forTimeInterval: 0.1)
                    }
                } catch {
                    results.failed("client \(index): \(error)")
                }
            }
            thread.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + seconds + 60), .success)

        let summary = results.summary()
        print(
            "load: \(clients) clients for \(Int(seconds)) s "
                + "\(movie ? "while a movie plays" : "with the movie paused"): "
                + "\(summary.events) controls, \(summary.statuses) status "
                + "requests, \(summary.lost) lost; command-to-event p50 \(summary.p50) ms, p95 \(summary.p95) ms, "
                + "p99 \(summary.p99) ms, max \(summary.max) ms; status p99 \(summary.statusP99) ms")
        XCTAssertEqual(summary.failures, [])
        XCTAssertEqual(summary.lost, 0)
        XCTAssertGreaterThan(summary.events, clients * Int(seconds))
        XCTAssertLessThan(summary.max, 1000, "a control waited a second for its event: a stall, not load")
        XCTAssertTrue(daemon.isRunning)
        XCTAssertTrue(sender.isRunning, "the movie plays on: \(sender.output.suffix(5))")
    }

    /// 500 connection attempts from strangers, eight at a time: bare TCP connects, junk bytes, TLS with a key that
    /// is not paired (it is told to pair), and TLS with no client certificate (`openssl s_client`). A paired
    /// sender asks for the status every 100 ms on its connection throughout and is answered each time; a new paired
    /// connection works afterwards; castd's resident memory grows by less than 30 MB.
    /// Strangers that connect and say nothing used to hold every place for the not-yet-admitted (16), and a paired
    /// sender that came then waited for their handshake timeout (4.8 s). Now it is served at once.
    func testAPairedSenderIsServedAtOnceBesideSilentStrangers() throws {
        let home = try pair("patient")
        var strangers: [Int32] = []
        defer { strangers.forEach { close($0) } }
        for _ in 0..<16 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            XCTAssertEqual(connected, 0)
            strangers.append(fd)
        }
        Thread.sleep(forTimeInterval: 0.3)  // all accepted and counted
        let status = try runCommand(
            [Paths.cast, "status", target],
            environment: ["XDG_CONFIG_HOME": (home as NSString).deletingLastPathComponent],
            timeout: 30)
        print("a paired sender beside 16 silent strangers was served after \(String(format: "%.2f", status.seconds)) s")
        XCTAssertEqual(status.status, 0, status.stderr)
        // The strangers' handshake timeout is 4.8 s: a sender that waited for it is over this bound, however loaded.
        XCTAssertLessThan(status.seconds, 4, "it waited for the strangers' handshake timeout")
        XCTAssertTrue(status.stdout.contains("state: stopped"), status.stdout)
        XCTAssertFalse(daemon.output.contains { $0.contains("refused") }, "\(daemon.output.suffix(5))")
    }

    func testFiveHundredStrangersLeaveMemoryBoundedAndPairedSendersServed() throws {
        let home = try pair("paired")
        // Warm-up: the first connections and a pairing allocate what castd keeps for its life.
        for _ in 0..<3 {
            let client = try PairedClient(port: port, configDirectory: home, name: "warm-up")
            XCTAssertTrue(try client.status())
            client.close()
        }
        let before = try residentKilobytes(daemon.pid)

        let paired = try PairedClient(port: port, configDirectory: home, name: "paired")
        defer { paired.close() }
        let results = LoadResults()
        let flooding = Flag()
        let watcher = Thread {
            while !flooding.isSet {
                do {
                    let asked = ContinuousClock.now
                    if try paired.status() { results.status(ContinuousClock.now - asked) } else { results.lost() }
                } catch {
                    results.failed("paired sender: \(error)")
                    return
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        watcher.start()

        let stranger = try Identity.loadOrCreate(directory: "\(work!)/stranger")
        let next = Counter()
        let outcomes = Counter()
        let group = DispatchGroup()
        let start = Date()
        for _ in 0..<8 {
            group.enter()
            Thread { [port] in
                defer { group.leave() }
                while let attempt = next.take(below: 500) {
                    Self.stranger(attempt, port: port, identity: stranger)
                    outcomes.add()
                }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 240), .success)
        let floodSeconds = Date().timeIntervalSince(start)
        flooding.set()
        while watcher.isExecuting { Thread.sleep(forTimeInterval: 0.01) }
        Thread.sleep(forTimeInterval: 1)

        let after = try residentKilobytes(daemon.pid)
        let summary = results.summary()
        let refused = daemon.output.filter { $0.contains("refused:") }.count
        print(
            "flood: \(outcomes.value) stranger attempts in \(String(format: "%.1f", floodSeconds)) s (\(refused) refused at "
                + "accept); castd VmRSS \(before) kB before, \(after) kB after; the paired sender's \(summary.statuses) "
                + "status requests: p99 \(summary.statusP99) ms, max \(summary.statusMax) ms, \(summary.lost) lost")
        XCTAssertEqual(outcomes.value, 500)
        XCTAssertEqual(summary.failures, [])
        XCTAssertEqual(summary.lost, 0)
        XCTAssertGreaterThan(summary.statuses, 5)
        XCTAssertTrue(daemon.isRunning)
        XCTAssertLessThan(after - before, 30 * 1024, "castd grew from \(before) kB to \(after) kB")
        let later = try PairedClient(port: port, configDirectory: home, name: "after")
        XCTAssertTrue(try later.status())
        later.close()
    }

    /// One stranger's attempt; what castd says back does not matter, only that it ends.
    private static func stranger(_ attempt: Int, port: UInt16, identity: Identity) {
        switch attempt % 4 {
        case 0:
            if let fd = try? TCP.connect(host: "127.0.0.1", port: port, timeout: .seconds(2)) { close(fd) }
        case 1:
            guard let fd = try? TCP.connect(host: "127.0.0.1", port: port, timeout: .seconds(2)) else { return }
            defer { close(fd) }
            var junk = [UInt8](repeating: 0, count: 2048)
            for i in junk.indices { junk[i] = UInt8(truncatingIfNeeded: (attempt &* 31) ^ (i &* 97)) }
            _ = junk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var timeout = timeval(tv_sec: 3, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 4096)
            while recv(fd, &buffer, buffer.count, 0) > 0 {}
        case 2:
            guard let fd = try? TCP.connect(host: "127.0.0.1", port: port, timeout: .seconds(2)),
                let tls = try? TLSConnection.connect(fd: fd, identity: identity, handshakeTimeout: .seconds(3))
            else { return }
            defer { tls.close() }
            try? tls.write(Message.hello(Hello(name: "stranger", software: "LoadTests")).frame().encoded())
            while let bytes = try? tls.read(maxCount: 4096, timeout: .seconds(3)), !bytes.isEmpty {}
        default:
            _ = try? runCommand(
                ["openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-tls1_3", "-quiet", "-no_ign_eof"],
                timeout: 10, input: Data())
        }
    }

    private func residentKilobytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }
}

/// A paired sender's control connection: TLS with its pinned identity, hello, then messages.
private final class PairedClient: @unchecked Sendable {
    // Invariant: one thread at a time uses a client (the one that made it, or the one it was handed to).
    private let tls: TLSConnection
    private var decoder = FrameDecoder()

    init(port: UInt16, configDirectory: String, name: String) throws {
        let identity = try Identity.loadOrCreate(directory: configDirectory)
        let fd = try TCP.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        tls = try TLSConnection.connect(fd: fd, identity: identity, handshakeTimeout: .seconds(5))
        try send(.hello(Hello(name: name, software: "LoadTests")))
        guard try waitFor(within: 5, { if case .welcome = $0 { true } else { false } }) else {
            throw PairedClientError(message: "no welcome")
        }
    }

    func send(_ message: Message) throws { try tls.write(message.frame().encoded(), timeout: .seconds(5)) }

    /// Reads until a message satisfies `matches` (true) or `seconds` pass (false); other messages are skipped.
    func waitFor(within seconds: Double, _ matches: (Message) -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            while let frame = try decoder.nextFrame() {
                let message = try Message(frame)
                if case .error(let error) = message {
                    throw PairedClientError(message: "\(error.code): \(error.message)")
                }
                if matches(message) { return true }
            }
            let left = deadline - ContinuousClock.now
            if left <= .zero { return false }
            let bytes = try tls.read(maxCount: 64 * 1024, timeout: left)
            if bytes.isEmpty { throw PairedClientError(message: "castd closed the connection") }
            decoder.feed(bytes)
        }
    }

    /// Asks for the status; whether it came within 5 s.
    func status() throws -> Bool {
        try send(.statusRequest)
        return try waitFor(within: 5) { if case .status = $0 { true } else { false } }
    }

    func close() { tls.close() }
}

private struct PairedClientError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Latencies and losses from many threads.
private final class LoadResults: @unchecked Sendable {
    // Invariant: `lock` guards every var.
    private let lock = NSLock()
    private var events: [Double] = []
    private var statuses: [Double] = []
    private var lostCount = 0
    private var failures: [String] = []

    func event(_ latency: Duration) { lock.withLock { events.append(Self.milliseconds(latency)) } }
    func status(_ latency: Duration) { lock.withLock { statuses.append(Self.milliseconds(latency)) } }
    func lost() { lock.withLock { lostCount += 1 } }
    func failed(_ message: String) { lock.withLock { failures.append(message) } }

    private static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    struct Summary {
        var events: Int, statuses: Int, lost: Int, failures: [String]
        var p50: Double, p95: Double, p99: Double, max: Double, statusP99: Double, statusMax: Double
    }

    func summary() -> Summary {
        lock.withLock {
            let sorted = events.sorted()
            let sortedStatuses = statuses.sorted()
            func percentile(_ values: [Double], _ p: Double) -> Double {
                guard !values.isEmpty else { return 0 }
                let value = values[min(values.count - 1, Int((Double(values.count) * p).rounded(.up)) - 1)]
                return (value * 10).rounded() / 10
            }
            return Summary(
                events: events.count, statuses: statuses.count, lost: lostCount, failures: failures,
                p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), p99: percentile(sorted, 0.99),
                max: percentile(sorted, 1), statusP99: percentile(sortedStatuses, 0.99),
                statusMax: percentile(sortedStatuses, 1))
        }
    }
}

/// Hands out attempt numbers to the flood's threads.
private final class Counter: @unchecked Sendable {
    // Invariant: `lock` guards `count`.
    private let lock = NSLock()
    private var count = 0
    func take(below limit: Int) -> Int? {
        lock.withLock {
            guard count < limit else { return nil }
            defer { count += 1 }
            return count
        }
    }
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
