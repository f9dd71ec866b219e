import CastDiscovery
import CastTestSupport
import Foundation
import Synchronization
import XCTest

/// A two-host lab made by `scripts/lab`: namespaces `NAME-box` and `NAME-phone`, each with its own bus and
/// avahi-daemon. Nothing of it touches the machine's real interfaces.
struct LabFixture {
    enum Host: String {
        case box, phone
    }

    private static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/lab").path
    private static let counter = Mutex(0)

    let name: String

    /// Brings up a fresh lab with a name unique to this process and test, or skips the test where labs cannot
    /// be made (not root, no `ip netns`, no avahi-daemon).
    static func up() throws -> LabFixture {
        guard getuid() == 0 else { throw XCTSkip("the network lab needs root") }
        guard (try? run(["/usr/sbin/ip", "netns", "list"])) != nil || (try? run(["/sbin/ip", "netns", "list"])) != nil
        else { throw XCTSkip("`ip netns` is unavailable") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/avahi-daemon") else {
            throw XCTSkip("avahi-daemon is not installed")
        }
        let serial = counter.withLock { counter in
            counter += 1
            return counter
        }
        let lab = LabFixture(name: "cdt\(getpid())x\(serial)")
        do {
            try lab.run("up")
        } catch {
            lab.down()
            throw error
        }
        return lab
    }

    /// Tears the lab down; never fails.
    func down() {
        _ = try? run("down")
    }

    /// `scripts/lab COMMAND NAME ARGS…`; returns standard output, throws when it exits non-zero.
    @discardableResult
    func run(_ command: String, _ arguments: String...) throws -> String {
        try Self.run([Self.script, command, name] + arguments)
    }

    /// The host's lab address.
    func address(_ host: Host) throws -> String {
        try run("addr", host.rawValue).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// avahi's name for the host (`NAME-box.local`).
    func hostName(_ host: Host) -> String {
        "\(name)-\(host.rawValue).local"
    }

    /// Makes this process's avahi clients, created from now on, talk to `host`'s avahi-daemon.
    ///
    /// libdbus reads `DBUS_SYSTEM_BUS_ADDRESS` once per process (`dbus_bus_get_private` caches the address), so
    /// switching the variable between hosts does nothing after the first client. Instead the variable names a
    /// symbolic link, set once, and this points the link at the host's bus socket (connect(2) follows it).
    func useBus(of host: Host) {
        Self.pointBusLink(at: "/tmp/cast-lab/\(name)/\(host.rawValue)/dbus.sock")
    }

    /// Points the process's bus link at a socket that does not exist: no system bus at all.
    func useMissingBus() {
        Self.pointBusLink(at: "/tmp/cast-lab/\(name)/no-such-bus.sock")
    }

    /// Removes the process's bus link (the next test points it again).
    static func removeBusLink() {
        unlink(busLink)
    }

    /// The link's path. libdbus caches the system bus address the first time anything in the process
    /// (SDL's video init, for one) asks for the system bus, so the address must name this link from
    /// the start: `scripts/test` exports `DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/cast-test-bus-….sock`
    /// before the test process starts, and the link lives there. Without it (a bare `swift test`),
    /// a link of this process's own is used, which works when these tests are the first to touch D-Bus.
    private static let busLink: String = {
        let prefix = "unix:path="
        if let address = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"], address.hasPrefix(prefix),
            address.dropFirst(prefix.count).hasPrefix("/tmp/cast-test-bus-")
        {
            return String(address.dropFirst(prefix.count))
        }
        return "/tmp/cast-lab-bus-\(getpid()).sock"
    }()

    private static func pointBusLink(at target: String) {
        let temporary = busLink + ".new"
        unlink(temporary)
        symlink(target, temporary)
        rename(temporary, busLink)
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=\(busLink)", 1)
    }

    /// The resolved `_castd._tcp` services that the real `avahi-browse` sees from `host`.
    func avahiBrowse(from host: Host) throws -> [BrowsedService] {
        let output = try run(
            "exec", host.rawValue, "avahi-browse", "--parsable", "--resolve", "--terminate", "_castd._tcp")
        return output.split(separator: "\n").compactMap(BrowsedService.init(parsableLine:))
    }

    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw LabError(
                command: arguments.joined(separator: " "), status: process.terminationStatus,
                errors: String(decoding: errorData, as: UTF8.self))
        }
        return String(decoding: data, as: UTF8.self)
    }
}

struct LabError: Error, CustomStringConvertible {
    var command: String
    var status: Int32
    var errors: String
    var description: String { "`\(command)` exited with \(status): \(errors)" }
}

/// One resolved line (`=;…`) of `avahi-browse --parsable --resolve`.
struct BrowsedService: Equatable {
    var name: String
    var host: String
    var address: String
    var port: UInt16
    /// The TXT items exactly as avahi-browse prints them, `key=value`.
    var txt: Set<String>

    init?(parsableLine line: Substring) {
        // =;lab0;IPv4;Living\032Room;_castd._tcp;local;HOST.local;10.77.1.1;7000;"a=b" "c=d"
        let fields = line.split(separator: ";", maxSplits: 9, omittingEmptySubsequences: false)
        guard fields.count == 10, fields[0] == "=", let port = UInt16(fields[8]) else { return nil }
        name = AvahiBrowseLine.unescape(fields[3])
        host = String(fields[6])
        address = String(fields[7])
        self.port = port
        txt = Set(
            fields[9].split(separator: "\" \"").map {
                AvahiBrowseLine.unescape(String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            }.filter { !$0.isEmpty })
    }
}

/// The events an Advertiser reported, in order, with a way to wait for one.
typealias EventLog = CastTestSupport.EventLog<AdvertiserEvent>
typealias AdvertiserEventRecord = EventLog.Record

/// A test in a lab of its own (up before each test, down after it) with the advertisers it started, stopped first.
class DiscoveryLabTestCase: XCTestCase {
    var lab: LabFixture?
    var advertisers: [Advertiser] = []

    override func setUpWithError() throws {
        lab = try LabFixture.up()
    }

    override func tearDown() {
        for advertiser in advertisers { advertiser.stop() }
        advertisers = []
        lab?.down()
        lab = nil
        LabFixture.removeBusLink()
    }
}
