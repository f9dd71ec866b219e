import Foundation
import XCTest

/// The live view of `cast send` and `cast queue` in a real terminal (tmux), every documented key, and the queue verbs
/// from a second process; each judged by what the receiver reports (`cast status --json` from another process, or
/// castd's events), not by the status line (issues 34 and 35).
final class LiveViewKeyTests: XCTestCase {
    private var lab: Lab!
    private var work: String!
    private let port = 7100

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            throw XCTSkip("tmux is not installed (scripts/setup installs it)")
        }
        work = NSTemporaryDirectory() + "cast-keys-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    /// Every key of `cast send`'s live view on one receiver: ↑/↓ at 0, in the middle and at 100 % (↑ at 90 % set
    /// 10 %: issue 34), space, ←/→ in the middle, at the start and at the end of the film, a key it does not know,
    /// and q.
    func testEveryKeyActsOnTheReceiver() throws {
        lab = try Lab("e2k\(getpid() % 100000)")
        let receiver = try startReceiver("Living Room", on: .box)
        let clip = try Media.clip("keys40.mp4", seconds: 40)
        let terminal = try sendInTerminal("send '\(clip)' --to \(receiver) --volume 0.5")
        defer { terminal.close() }
        try awaitStatus(receiver, "playing at 0.5") { $0.state == "playing" && $0.volume == 0.5 }

        // ↑ and ↓ in the middle: a tenth each way.
        try press("Up", in: terminal, then: receiver, "volume 0.6") { $0.volume == 0.6 }
        try press("Down", in: terminal, then: receiver, "volume 0.5") { $0.volume == 0.5 }
        // Up to 100 %, one ↑ more (stays), then ↓: 90 % (keys are carried out in order: ↑ at 100 % did nothing).
        for level in [0.6, 0.7, 0.8, 0.9, 1.0] {
            try press("Up", in: terminal, then: receiver, "volume \(level)") { $0.volume == level }
        }
        XCTAssertTrue(terminal.press("Up"))
        try press("Down", in: terminal, then: receiver, "volume 0.9 after ↑ at 100 %") { $0.volume == 0.9 }
        // Down to 0, one ↓ more (stays), then ↑: 10 %.
        for tenths in (0...8).reversed() {
            try press("Down", in: terminal, then: receiver, "volume \(tenths)/10") { $0.volume == Double(tenths) / 10 }
        }
        XCTAssertTrue(terminal.press("Down"))
        try press("Up", in: terminal, then: receiver, "volume 0.1 after ↓ at 0") { $0.volume == 0.1 }
        // A key it does not know is ignored: the next key acts from where it was.
        XCTAssertTrue(terminal.press("x"))
        try press("Up", in: terminal, then: receiver, "volume 0.2 after an unknown key") {
            $0.volume == 0.2 && $0.state == "playing"
        }

        // Space pauses; seeks while paused land where asked (a key frame a second), and space resumes.
        try press("Space", in: terminal, then: receiver, "paused") { $0.state == "paused" }
        let here = try awaitStatus(receiver, "a position") { $0.position != nil }.position!
        let forward = try press("Right", in: terminal, then: receiver, "10 s further") {
            abs(($0.position ?? -100) - (here + 10)) < 1.5
        }
        try press("Left", in: terminal, then: receiver, "10 s back") {
            abs(($0.position ?? -100) - (forward.position! - 10)) < 1.5
        }
        // ← near the start goes to the start, not before it.
        XCTAssertEqual(try cast(["seek", receiver.address, "3"]).status, 0)
        try press("Left", in: terminal, then: receiver, "at the start") { ($0.position ?? -1) < 0.5 }
        XCTAssertEqual(try awaitStatus(receiver, "still paused") { $0.state == "paused" }.state, "paused")
        try press("Space", in: terminal, then: receiver, "playing again") { $0.state == "playing" }

        // → near the end goes to the end: the film finishes there and cast exits 0.
        XCTAssertEqual(try cast(["seek", receiver.address, "36"]).status, 0)
        XCTAssertTrue(terminal.press("Right"))
        XCTAssertNotNil(terminal.waitFor("exit=0", timeout: 20), terminal.screen)
        try awaitStatus(receiver, "stopped at the end") { $0.state == "stopped" }
        let ended = receiver.events.waitForLine(containing: #""reason":"playbackEnded""#, timeout: 5)
        XCTAssertNotNil(ended, "\(receiver.events.output)")

        // q stops, and cast exits 0.
        let again = try sendInTerminal("send '\(clip)' --to \(receiver)")
        defer { again.close() }
        try awaitStatus(receiver, "playing again") { $0.state == "playing" }
        XCTAssertTrue(again.press("q"))
        XCTAssertNotNil(again.waitFor("exit=0", timeout: 20), again.screen)
        try awaitStatus(receiver, "stopped by q") { $0.state == "stopped" }
        XCTAssertNotNil(
            receiver.events.waitForLine(containing: #""reason":"userExited""#, timeout: 5), "\(receiver.events.output)")
    }

    /// A queue: n, >, p and < in the live view, `cast next` and `cast previous` from another terminal, at both ends
    /// of the queue without and with repeat, `cast volume up|down`; and `cast next` with nothing queued (exit 1).
    func testQueueKeysAndVerbsFromAnotherTerminal() throws {
        lab = try Lab("e2q\(getpid() % 100000)")
        let receiver = try startReceiver("Kitchen", on: .box)
        let songs = try ["qa", "qb", "qc"].map { try Media.clip("\($0).mp4", seconds: 30, video: false) }
        let list = songs.map { "'\($0)'" }.joined(separator: " ")

        let once = try sendInTerminal("queue \(list) --to \(receiver) --volume 0.5")
        defer { once.close() }
        try awaitStatus(receiver, "1/3 qa") { $0.queue == "1/3" && $0.title == "qa.mp4" && $0.state == "playing" }
        // cast watch shows each source with its place in the queue as it starts.
        let watcher = try lab.start(
            on: .phone, [Paths.cast, "watch", receiver.address, "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(watcher.waitForLine(containing: #""queue":{"count":3,"number":1}"#), "\(watcher.output)")
        // p at the first song, without repeat: the first again (a new session, playing from its start).
        try atTheStart(in: once, of: receiver)
        try press("p", in: once, then: receiver, "qa again") {
            $0.queue == "1/3" && $0.title == "qa.mp4" && $0.state == "playing"
        }
        try press("n", in: once, then: receiver, "2/3 qb") {
            $0.queue == "2/3" && $0.title == "qb.mp4" && $0.state == "playing"
        }
        let next = try cast(["next", receiver.address])
        XCTAssertEqual(next.status, 0, next.stderr)
        XCTAssertTrue(next.stdout.contains("queue: 3/3"), next.stdout)
        try awaitStatus(receiver, "3/3 qc") { $0.queue == "3/3" && $0.title == "qc.mp4" && $0.state == "playing" }
        for (number, title) in [(2, "qb.mp4"), (3, "qc.mp4")] {
            XCTAssertNotNil(
                watcher.waitForLine { $0.contains(#""queue":{"count":3,"number":\#(number)}"#) && $0.contains(title) },
                "\(watcher.output)")
        }
        // Volume from another terminal, in steps.
        XCTAssertEqual(try cast(["volume", receiver.address, "up"]).status, 0)
        try awaitStatus(receiver, "volume 0.6") { $0.volume == 0.6 }
        XCTAssertEqual(try cast(["volume", receiver.address, "down"]).status, 0)
        try awaitStatus(receiver, "volume 0.5") { $0.volume == 0.5 }
        // n at the last song, without repeat: the queue is over, exit 0.
        XCTAssertTrue(once.press("n"))
        XCTAssertNotNil(once.waitFor("exit=0", timeout: 20), once.screen)
        try awaitStatus(receiver, "stopped after the last") { $0.state == "stopped" }
        // Nothing queued: exit 1, and it says so.
        let nothing = try cast(["next", receiver.address])
        XCTAssertEqual(nothing.status, 1, nothing.stdout)
        XCTAssertTrue(nothing.stderr.contains("nothing queued"), nothing.stderr)

        let round = try sendInTerminal("queue \(list) --to \(receiver) --repeat all")
        defer { round.close() }
        try awaitStatus(receiver, "1/3 qa") { $0.queue == "1/3" && $0.state == "playing" }
        // Previous at the first with repeat all: the last. (Paused at 0 first: the rule looks at the time played.)
        try atTheStart(in: round, of: receiver)
        let previous = try cast(["previous", receiver.address])
        XCTAssertEqual(previous.status, 0, previous.stderr)
        try awaitStatus(receiver, "3/3 qc") { $0.queue == "3/3" && $0.title == "qc.mp4" && $0.state == "playing" }
        // > at the last with repeat all: the first.
        try press(">", in: round, then: receiver, "1/3 qa again") { $0.queue == "1/3" && $0.title == "qa.mp4" }
        // p after more than 3 s: the same song from its start; < at once after: the previous song.
        try awaitStatus(receiver, "4 s into qa", timeout: 20) { ($0.position ?? 0) > 4 && $0.queue == "1/3" }
        try press("p", in: round, then: receiver, "qa from its start") { ($0.position ?? 9) < 3 && $0.queue == "1/3" }
        try atTheStart(in: round, of: receiver)
        try press("<", in: round, then: receiver, "3/3 qc after <") { $0.queue == "3/3" && $0.title == "qc.mp4" }
        try press("q", in: round, then: receiver, "stopped by q") { $0.state == "stopped" }
        XCTAssertNotNil(round.waitFor("exit=0", timeout: 20), round.screen)

        // A single source is no queue.
        let clip = try Media.clip("single10.mp4", seconds: 10, video: false)
        let single = try sendInTerminal("send '\(clip)' --to \(receiver)")
        defer { single.close() }
        try awaitStatus(receiver, "playing alone") { $0.state == "playing" && $0.queue == nil }
        let alone = try cast(["next", receiver.address])
        XCTAssertEqual(alone.status, 1, alone.stdout)
        XCTAssertTrue(alone.stderr.contains("nothing queued"), alone.stderr)
    }

    /// The group's live view (several --to): ↑/↓ set every member's volume, space pauses and resumes them all, n
    /// moves the group's queue on every member (and `cast next` to one member moves them all), q stops them all.
    func testGroupLiveViewActsOnEveryMember() throws {
        lab = try Lab("e2g\(getpid() % 100000)", rooms: 2)
        let kitchen = try startReceiver("Kitchen", on: .room1)
        let livingRoom = try startReceiver("Living Room", on: .room2)
        let members = [kitchen, livingRoom]
        let songs = try ["ga", "gb", "gc"].map { try Media.clip("\($0).mp4", seconds: 30, video: false) }
        let terminal = try sendInTerminal(
            "queue \(songs.map { "'\($0)'" }.joined(separator: " ")) --to \(kitchen) --to \(livingRoom) --volume 0.5")
        defer { terminal.close() }
        for member in members {
            try awaitStatus(member, "\(member) plays ga at 0.5") {
                $0.state == "playing" && $0.title == "ga.mp4" && $0.volume == 0.5
            }
        }
        for (key, level) in [("Up", 0.6), ("Up", 0.7), ("Down", 0.6)] {
            XCTAssertTrue(terminal.press(key))
            for member in members { try awaitStatus(member, "\(member) at \(level)") { $0.volume == level } }
        }
        XCTAssertTrue(terminal.press("Space"))
        for member in members { try awaitStatus(member, "\(member) paused") { $0.state == "paused" } }
        XCTAssertTrue(terminal.press("Space"))
        for member in members { try awaitStatus(member, "\(member) playing") { $0.state == "playing" } }
        XCTAssertTrue(terminal.press("n"))
        for member in members {
            try awaitStatus(member, "\(member) plays gb 2/2", timeout: 30) {
                $0.state == "playing" && $0.title == "gb.mp4" && $0.queue == "2/3"
            }
        }
        // From another terminal, through one member: the whole group moves.
        let next = try cast(["next", livingRoom.address])
        XCTAssertEqual(next.status, 0, next.stderr)
        for member in members {
            try awaitStatus(member, "\(member) plays gc 3/3", timeout: 30) {
                $0.state == "playing" && $0.title == "gc.mp4" && $0.queue == "3/3"
            }
        }
        XCTAssertTrue(terminal.press("q"))
        XCTAssertNotNil(terminal.waitFor("exit=0", timeout: 20), terminal.screen)
        for member in members { try awaitStatus(member, "\(member) stopped") { $0.state == "stopped" } }
    }

    // MARK: Support

    /// Pauses (space) and goes to 0 (`cast seek` from another process): `p` and `cast previous` then go to the
    /// previous source however slow the machine is.
    private func atTheStart(in terminal: TerminalSession, of receiver: Receiver) throws {
        try press("Space", in: terminal, then: receiver, "paused") { $0.state == "paused" }
        XCTAssertEqual(try cast(["seek", receiver.address, "0"]).status, 0)
        try awaitStatus(receiver, "paused at 0") { $0.state == "paused" && ($0.position ?? 9) < 0.5 }
    }

    /// A receiver started for the test: its address (HOST:PORT, no discovery needed) and its events.
    private struct Receiver: CustomStringConvertible {
        let address: String
        let events: Daemon
        var description: String { address }
    }

    /// What `cast status --json` says.
    private struct Status {
        let state: String
        let title: String?
        let position: Double?
        let volume: Double?
        /// "3/12"
        let queue: String?
    }

    private func startReceiver(_ name: String, on host: Lab.Host) throws -> Receiver {
        let folder = "\(work!)/\(host.rawValue)"
        let daemon = try lab.start(
            on: host,
            [
                Paths.castd, "--name", name, "--auth", "none", "--port", "\(port)", "--state-dir", "\(folder)/state",
                "--video-out", "none", "--audio-device", "none", "--events", "-",
            ])
        XCTAssertNotNil(daemon.waitForLine(containing: "advertised as"), "\(daemon.output)")
        return Receiver(address: "\(lab.address(host)):\(port)", events: daemon)
    }

    /// `cast ARGS` (a SOURCE command) in a terminal on the phone; the shell then says its exit status.
    private func sendInTerminal(_ arguments: String) throws -> TerminalSession {
        try TerminalSession(
            lab: lab, on: .phone, command: "\(Paths.cast) \(arguments); echo exit=$?; sleep 60",
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
    }

    /// `cast` from a second process on the phone.
    private func cast(_ arguments: [String]) throws -> CommandResult {
        try lab.run(on: .phone, [Paths.cast] + arguments, environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
    }

    /// Presses `key`, then waits for the receiver to report `done`.
    @discardableResult
    private func press(
        _ key: String, in terminal: TerminalSession, then receiver: Receiver, _ what: String,
        file: StaticString = #filePath, line: UInt = #line, _ done: (Status) -> Bool
    ) throws -> Status {
        XCTAssertTrue(terminal.press(key), file: file, line: line)
        return try awaitStatus(receiver, "\(key): \(what) (screen: \(terminal.screen))", file: file, line: line, done)
    }

    /// Asks the receiver's status from another process until it satisfies `done` (a hang bound of `timeout` s).
    @discardableResult
    private func awaitStatus(
        _ receiver: Receiver, _ what: String, timeout: Double = 15, file: StaticString = #filePath,
        line: UInt = #line, _ done: (Status) -> Bool
    ) throws -> Status {
        let deadline = Date().addingTimeInterval(timeout)
        var last: Status?
        repeat {
            if let status = try? status(of: receiver) {
                last = status
                if done(status) { return status }
            }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        XCTFail("the receiver never reported \(what); last: \(String(describing: last))", file: file, line: line)
        throw Lab.LabError(message: "stopped: \(what)")
    }

    private func status(of receiver: Receiver) throws -> Status {
        let result = try cast(["status", receiver.address, "--json"])
        guard result.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let state = object["state"] as? String
        else { throw Lab.LabError(message: "cast status: \(result.stderr)") }
        let queue = (object["queue"] as? [String: Any]).flatMap { place -> String? in
            guard let number = place["number"] as? Int, let count = place["count"] as? Int else { return nil }
            return "\(number)/\(count)"
        }
        // Levels are set in tenths: compared as such.
        let volume = (object["volume"] as? Double).map { ($0 * 100).rounded() / 100 }
        return Status(
            state: state, title: object["title"] as? String, position: object["position"] as? Double, volume: volume,
            queue: queue)
    }
}
