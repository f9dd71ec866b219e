import CastMedia
import Foundation
import XCTest

@testable import CastReceiver

/// castd's flags over its config file, validated in one place, without starting castd.
final class ReceiverSettingsTests: XCTestCase {
    private var directory: String!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "receiver-settings-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// An environment with no display, not root, and no default config file.
    private func environment(_ variables: [String: String] = ["HOME": "/home/ann"]) -> ReceiverSettings.Environment {
        var environment = ReceiverSettings.Environment(variables: variables, isRoot: false, hostName: "box")
        environment.defaultConfigFile = directory + "/absent.conf"
        return environment
    }

    private func parse(_ arguments: [String], _ variables: [String: String] = ["HOME": "/home/ann"]) throws
        -> ReceiverSettings
    {
        try ReceiverSettings.parse(arguments, environment: environment(variables))
    }

    private func problem(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            _ = try parse(arguments)
            XCTFail("\(arguments) was accepted", file: file, line: line)
            return nil
        } catch {
            return (error as? ReceiverSettings.Problem)?.message
        }
    }

    private func config(_ text: String) throws -> String {
        let path = directory + "/castd.conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testTheDefaults() throws {
        let settings = try parse([])
        XCTAssertEqual(settings.command, .run)
        let configuration = settings.configuration
        XCTAssertEqual(configuration.name, "box")
        XCTAssertEqual(configuration.port, 7100)
        XCTAssertEqual(configuration.listenAddress, "::")
        XCTAssertEqual(configuration.auth, .pin)
        XCTAssertEqual(configuration.stateDirectory, "/home/ann/.local/state/castd")
        XCTAssertTrue(configuration.advertise)
        XCTAssertEqual(configuration.engine.video, .none, "no display: no window")
        XCTAssertEqual(configuration.engine.scalingMode, .aspectFit)
        XCTAssertEqual(configuration.engine.audioChannels, 2)
        XCTAssertEqual(configuration.engine.audioClock, .auto, "by the PCM")
        XCTAssertEqual(configuration.decoderIsolation, .on(DecoderLimits()))
        XCTAssertNil(configuration.airPlayVideoPort)
        XCTAssertNil(settings.eventsPath)
        XCTAssertNil(settings.passwordFile)
        XCTAssertEqual(try parse([], ["DISPLAY": ":1"]).configuration.engine.video, .window)
        XCTAssertEqual(try parse([], ["XDG_STATE_HOME": "/s"]).configuration.stateDirectory, "/s/castd")
    }

    func testEveryValueIsTakenAndChecked() throws {
        let settings = try parse([
            "--name", "Kitchen", "--port", "0", "--listen", "127.0.0.1", "--audio-device", "none", "--audio-channels",
            "6",
            "--audio-clock", "device",
            "--video-out", "framemd5:/tmp/f.md5", "--scaling", "fill", "--takeover", "deny", "--sender-timeout", "2.5",
            "--pairing-attempts", "3", "--decoder-memory", "600", "--decoder-cpu", "30", "--no-advertise",
            "--airplay-video", "--airplay-port", "7002", "--events", "-", "--state-dir", "/state",
        ])
        let configuration = settings.configuration
        XCTAssertEqual(configuration.name, "Kitchen")
        XCTAssertEqual(configuration.port, 0)
        XCTAssertEqual(configuration.listenAddress, "127.0.0.1")
        XCTAssertEqual(configuration.engine.audio, .none)
        XCTAssertEqual(configuration.engine.audioChannels, 6)
        XCTAssertEqual(configuration.engine.audioClock, .device)
        XCTAssertEqual(configuration.engine.video, .framemd5(path: "/tmp/f.md5"))
        XCTAssertEqual(configuration.engine.scalingMode, .fill)
        XCTAssertEqual(configuration.takeover, .deny)
        XCTAssertEqual(configuration.limits.senderTimeout, .milliseconds(2500))
        XCTAssertEqual(configuration.limits.pairingAttemptLimit, 3)
        var limits = DecoderLimits()
        limits.addressSpace = 600 << 20
        limits.cpuWithoutProgress = 30
        XCTAssertEqual(configuration.decoderIsolation, .on(limits))
        XCTAssertFalse(configuration.advertise)
        XCTAssertEqual(configuration.airPlayVideoPort, 7002)
        XCTAssertEqual(configuration.stateDirectory, "/state")
        XCTAssertEqual(settings.eventsPath, "-")

        let problems: [([String], String)] = [
            (["--name", ""], "--name must be 1 to 63 bytes"),
            (["--name", String(repeating: "x", count: 64)], "--name must be 1 to 63 bytes"),
            (["--port", "65536"], "--port must be a number"),
            (["--auth", "pins"], "--auth must be pin, password or none"),
            (["--audio-clock", "card"], "--audio-clock must be device, engine or auto"),
            (["--video-out", "framemd5:"], "--video-out must be"),
            (["--scaling", "stretch"], "--scaling must be"),
            (["--audio-device", ""], "--audio-device must name"),
            (["--audio-channels", "9"], "--audio-channels must be a number from 1 to 8"),
            (["--takeover", "maybe"], "--takeover must be allow or deny"),
            (["--sender-timeout", "0.5"], "--sender-timeout must be"),
            (["--pairing-attempts", "11"], "--pairing-attempts must be a number from 1 to 10"),
            (["--decoder-memory", "100"], "--decoder-memory must be a number of MiB"),
            (["--decoder-memory", "600", "--video-out", "window"], "at least 1024 MiB with --video-out window"),
            (["--decoder-cpu", "0"], "--decoder-cpu must be"),
            (["--decoder-isolation", "maybe"], "--decoder-isolation must be on or off"),
            (["--airplay-port", "7000"], "--airplay-port needs --airplay-video"),
            (["--auth", "password"], "--auth password needs --password-file FILE"),
            (["--colour", "red"], "(see castd --help)"),
            (["extra"], "unexpected argument 'extra'"),
        ]
        for (arguments, expected) in problems {
            let message = problem(arguments) ?? ""
            XCTAssertTrue(message.contains(expected), "\(arguments): \(message)")
        }
        XCTAssertEqual(
            try parse(["--decoder-isolation", "off", "--decoder-memory", "1"]).configuration.decoderIsolation, .off)
    }

    func testCommandsThatPrintAndExit() throws {
        XCTAssertEqual(try parse(["--help", "--port", "x"]).command, .help)
        XCTAssertEqual(try parse(["--man"]).command, .manual)
        XCTAssertEqual(try parse(["--list-paired"]).command, .listPaired)
        XCTAssertEqual(try parse(["--unpair", "ab12"]).command, .unpair("ab12"))
        XCTAssertEqual(try parse(["--list-audio-devices", "--list-paired"]).command, .listAudioDevices)
        // Listing the paired senders works with a daemon's config that has auth = password but not its file.
        XCTAssertEqual(try parse(["--list-paired", "--auth", "password"]).command, .listPaired)
    }

    func testTheConfigFileUnderTheFlags() throws {
        let path = try config("name = Attic\nport = 7200\nairplay-video = no\nno-advertise = yes\n# a comment\n")
        let settings = try parse(["--config", path, "--port", "7300"])
        XCTAssertEqual(settings.configuration.name, "Attic")
        XCTAssertEqual(settings.configuration.port, 7300, "the flag wins")
        XCTAssertNil(settings.configuration.airPlayVideoPort, "a switch set to no stays off")
        XCTAssertFalse(settings.configuration.advertise)

        XCTAssertTrue(
            problem(["--config", try config("nam = Attic\n")])?.contains("line 1: unknown setting 'nam'") == true)
        XCTAssertTrue(
            problem(["--config", try config("config = /etc/other\n")])?.contains("unknown setting 'config'") == true)
        XCTAssertTrue(
            problem(["--config", try config("airplay-video = maybe\n")])?.contains("is a switch: yes or no") == true)
        XCTAssertTrue(
            problem(["--config", directory + "/missing.conf"])?.contains("cannot read the config file") == true)
        XCTAssertTrue(problem(["--config", try config("port = many\n")])?.contains("--port must be a number") == true)
    }

    func testAReloadChangesTheNameAndScalingAndNamesTheRest() throws {
        let path = try config("name = Attic\nport = 7200\ntakeover = deny\n")
        let running = try parse(["--config", path])
        _ = try config("name = Loft\nport = 7201\nscaling = fill\n")
        let reloaded = try parse(["--config", path])
        let change = reloaded.reload(over: running)
        XCTAssertEqual(change.name, "Loft")
        XCTAssertEqual(change.scaling, .fill)
        XCTAssertEqual(change.needRestart, ["port", "takeover"], "a removed setting needs a restart too")
    }
}
