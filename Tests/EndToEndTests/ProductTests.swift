import Foundation
import XCTest

/// The programs as a user meets them: help, spelling mistakes, the config file, SIGHUP, systemd.
final class ProductTests: XCTestCase {
    func testHelpAndSpellingMistakes() throws {
        let help = try runCommand([Paths.cast, "--help"])
        XCTAssertEqual(help.status, 0)
        for verb in [
            "list", "send", "queue", "status", "pause", "resume", "stop", "seek", "volume", "watch", "pair", "unpair",
            "config",
        ] {
            XCTAssertTrue(help.stdout.contains("\n  \(verb) "), "\(verb) missing from:\n\(help.stdout)")
        }
        let pause = try runCommand([Paths.cast, "pause", "--help"])
        XCTAssertEqual(pause.status, 0)
        XCTAssertEqual(
            pause.stdout,
            """
            usage: cast pause [NAME] [--json]

            Pause what plays on a receiver.
            NAME is a receiver's name, id, unique prefix, an alias (cast config), or HOST:PORT; without it, the default receiver (cast config default), else the only one in sight.

            options:
              --json            print JSON instead of text (events as JSON lines)
              --timeout SEC     how long to look for receivers (default 2)
              --help            show this help

            examples:
              cast pause "Living Room"
              cast pause

            """)
        let verb = try runCommand([Paths.cast, "stauts", "x"])
        XCTAssertEqual(verb.status, 2)
        XCTAssertEqual(verb.stderr, "cast: unknown verb 'stauts'; did you mean 'status'? (see cast --help)\n")
        let flag = try runCommand([Paths.cast, "send", "a.mp4", "--jsno"])
        XCTAssertEqual(flag.status, 2)
        XCTAssertEqual(
            flag.stderr, "cast send: unknown option '--jsno'; did you mean '--json'? (see cast send --help)\n")
        let castdFlag = try runCommand([Paths.castd, "--prot", "7"])
        XCTAssertEqual(castdFlag.status, 2)
        XCTAssertTrue(castdFlag.stderr.contains("did you mean '--port'?"), castdFlag.stderr)
        // A window session's worker maps SDL and the display's renderer too: 512 MiB is too little for it.
        let memory = try runCommand([Paths.castd, "--video-out", "fullscreen", "--decoder-memory", "600"])
        XCTAssertEqual(memory.status, 2)
        XCTAssertTrue(memory.stderr.contains("at least 1024 MiB with --video-out window or fullscreen"), memory.stderr)
        let castdHelp = try runCommand([Paths.castd, "--help"])
        XCTAssertEqual(castdHelp.status, 0)
        XCTAssertTrue(castdHelp.stdout.hasPrefix("usage: castd "), castdHelp.stdout)
        // Every option line: the option, its placeholder, then at least two spaces before its help (no
        // `--decoder-isolation MODEon (default)`), and all help in one column.
        let optionLines = castdHelp.stdout.components(separatedBy: "options:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").map(String.init)
        XCTAssertGreaterThan(optionLines.count, 20, castdHelp.stdout)
        let columns = Set(
            optionLines.map { line -> Int in
                let synopsis = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
                    .prefix { !$0.isEmpty }.joined(separator: " ")
                XCTAssertTrue(synopsis.hasPrefix("--"), line)
                let rest = line.dropFirst(2 + synopsis.count)
                XCTAssertTrue(rest.hasPrefix("  "), "the help runs into the option: \(line)")
                return line.count - rest.drop { $0 == " " }.count
            })
        XCTAssertEqual(columns.count, 1, "the help is not in one column:\n\(castdHelp.stdout)")
    }

    /// `cast` links no media library and not Foundation (it starts in milliseconds, and a send to a Cast receiver loads
    /// no decoder): an AirPlay speaker's audio is decoded by its helper `cast-decode`, which does link FFmpeg, and
    /// `cast mirror`'s screen is captured and encoded by its helper `cast-mirror`, which links X11 and FFmpeg.
    func testCastLinksNoFFmpegSDLOrALSAAndItsDecoderDoes() throws {
        let media = ["libavcodec", "libavformat", "libSDL2", "libasound", "libass"]
        let cast = try runCommand(["ldd", Paths.cast])
        XCTAssertEqual(cast.status, 0)
        XCTAssertTrue(cast.stdout.contains("libssl"), cast.stdout)
        for library in media { XCTAssertFalse(cast.stdout.contains(library), "cast links \(library):\n\(cast.stdout)") }
        // Nor all of Foundation (CoreFoundation, ICU): the sender's libraries use FoundationEssentials only, which a
        // build with the Swift runtime as shared libraries (the tests' debug build) shows (docs/architecture.md).
        if cast.stdout.contains("libswiftCore") {
            XCTAssertTrue(cast.stdout.contains("libFoundationEssentials"), cast.stdout)
        }
        for library in ["libFoundation.so", "lib_FoundationICU", "libFoundationInternationalization"] {
            XCTAssertFalse(cast.stdout.contains(library), "cast links \(library):\n\(cast.stdout)")
        }
        let helper = try runCommand(["ldd", Paths.binaries.appendingPathComponent("cast-decode").path])
        XCTAssertEqual(helper.status, 0)
        XCTAssertTrue(helper.stdout.contains("libavcodec"), helper.stdout)
        let mirror = try runCommand(["ldd", Paths.binaries.appendingPathComponent("cast-mirror").path])
        XCTAssertEqual(mirror.status, 0)
        for library in ["libavcodec", "libX11", "libXext", "libXdamage"] {
            XCTAssertTrue(mirror.stdout.contains(library), "cast-mirror links \(library):\n\(mirror.stdout)")
        }
        for library in ["libX11", "libXdamage"] {
            XCTAssertFalse(cast.stdout.contains(library), "cast links \(library):\n\(cast.stdout)")
        }
    }

    /// The helpers link no OpenSSL of their own: cast-decode moves frames over its socket with CastSystem's
    /// `FramedStream` and cast-mirror writes a pipe, neither needs CastSecurity (docs/architecture.md, "Layers"); and
    /// no program links libavfilter.
    ///
    /// Read from the programs' own `NEEDED` entries, not from `ldd`: Debian's libavformat brings libssl and libcrypto
    /// in itself (through librabbitmq, FFmpeg's AMQP protocol), so ldd's closure lists them for any FFmpeg program.
    func testTheHelpersLinkNoOpenSSLOfTheirOwn() throws {
        for helper in ["cast-decode", "cast-mirror"] {
            let path = Paths.binaries.appendingPathComponent(helper).path
            let dynamic = try runCommand(["readelf", "--dynamic", path])
            XCTAssertEqual(dynamic.status, 0, dynamic.stderr)
            let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
            XCTAssertTrue(needed.contains { $0.contains("libavcodec") }, "\(helper) needs:\n\(needed)")
            for library in ["libssl", "libcrypto"] {
                XCTAssertFalse(needed.contains { $0.contains(library) }, "\(helper) links \(library):\n\(needed)")
            }
        }
        // libavfilter is opened when a filter is first needed (CFFmpeg's avfilter.h), so no program links it.
        for program in ["castd", "cast-decode", "cast-mirror"] {
            let dynamic = try runCommand(["readelf", "--dynamic", Paths.binaries.appendingPathComponent(program).path])
            XCTAssertFalse(dynamic.stdout.contains("[libavfilter"), "\(program) links libavfilter:\n\(dynamic.stdout)")
        }
        // `cast` itself does: TLS is CastSecurity's.
        let cast = try runCommand(["readelf", "--dynamic", Paths.cast])
        XCTAssertTrue(cast.stdout.contains("[libssl.so"), cast.stdout)
    }

    /// A program that imports CastKit alone names the players, receivers, pairing and errors, and none of CastSender's
    /// machinery (`SenderConnectionStateMachine`, `ReceiverConnection`, ...): CastKit exports types one by one, not
    /// CastSender whole (issue 28). A name that must not compile cannot be tried inside XCTest, so the script
    /// type-checks two small programs against the modules this build made.
    func testCastKitExportsWhatAProgramUsesAndNotTheSendersMachinery() throws {
        let check = try runCommand(
            [Paths.package.appendingPathComponent("scripts/check-castkit-api").path, Paths.binaries.path], timeout: 300)
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        XCTAssertTrue(check.stdout.contains("machinery types hidden"), check.stdout)
    }

    /// avahi-client is opened on first use, not linked: a `cast` that never browses maps no avahi, D-Bus or systemd
    /// library (2.1 M instructions of the dynamic loader's work at every start), and where avahi-client is not
    /// installed a browse says so and exits 3 (discovery) instead of `cast` not starting at all. castd still
    /// advertises and `cast list` still finds it (DiscoveryAndStatusTests).
    func testCastMapsNoAvahiUntilItBrowses() throws {
        let cast = try runCommand(["ldd", Paths.cast])
        XCTAssertEqual(cast.status, 0)
        let help = try runCommand([Paths.cast, "--help"], environment: ["LD_DEBUG": "files"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stderr.contains("calling init"), "LD_DEBUG had no effect:\n\(help.stderr)")
        // "lib" too: the checkout's path may name avahi.
        for library in ["libavahi", "libdbus", "libsystemd"] {
            XCTAssertFalse(cast.stdout.contains(library), "cast links \(library):\n\(cast.stdout)")
            XCTAssertFalse(help.stderr.contains(library), "cast --help loads \(library):\n\(help.stderr)")
        }

        // Without the library: a mount namespace of its own where the file is empty.
        let installed = URL(fileURLWithPath: try Self.installedAvahiClient()).resolvingSymlinksInPath().path
        let list = try runCommand([
            "unshare", "--mount", "sh", "-c", "mount --bind /dev/null \"$0\" && exec \"$1\" list --timeout 1",
            installed, Paths.cast,
        ])
        XCTAssertEqual(list.status, 3, list.stderr)
        XCTAssertTrue(
            list.stderr.contains("the avahi client library (libavahi-client.so.3) is not installed ("), list.stderr)
    }

    /// Where the dynamic loader finds libavahi-client.so.3, from its cache.
    private static func installedAvahiClient() throws -> String {
        let cache = try runCommand(["/sbin/ldconfig", "-p"])
        let line = cache.stdout.split(separator: "\n").first { $0.contains("libavahi-client.so.3 ") }
        return try XCTUnwrap(line?.components(separatedBy: " => ").last, "libavahi-client.so.3 is not installed")
    }

    /// The help is the parser's contract, word for word: every verb the tool's help lists has a help of its own
    /// whose options all parse, whose synopsis names only those options, and whose every example parses.
    func testEveryVerbsHelpMatchesWhatItsParserAccepts() throws {
        let tool = try runCommand([Paths.cast, "--help"])
        let listed = tool.stdout.components(separatedBy: "verbs:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").map { String($0.dropFirst(2).prefix { $0 != " " }) }
        XCTAssertEqual(
            Set(listed),
            [
                "list", "send", "queue", "join", "move", "status", "pause", "resume", "stop", "seek", "volume",
                "subtitles",
                "audio", "next", "previous", "mirror", "watch", "pair", "unpair", "config",
            ], tool.stdout)
        // Every verb stands apart from its text (a verb as long as the column ran into it: "subtitlesShow").
        for line in tool.stdout.components(separatedBy: "verbs:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n")
        {
            let verb = line.dropFirst(2).prefix { $0 != " " }
            XCTAssertTrue(line.dropFirst(2 + verb.count).hasPrefix("  "), "the verb runs into its text: \(line)")
        }
        for verb in listed {
            let help = try runCommand([Paths.cast, verb, "--help"])
            XCTAssertEqual(help.status, 0, verb)
            let sections = help.stdout.components(separatedBy: "\n\n")
            let synopsis = try XCTUnwrap(sections.first?.split(separator: "\n").first.map(String.init), help.stdout)
            XCTAssertTrue(synopsis.hasPrefix("usage: cast \(verb)"), synopsis)
            let options = try XCTUnwrap(sections.first { $0.hasPrefix("options:") }, help.stdout)
                .split(separator: "\n").dropFirst().map {
                    $0.trimmingCharacters(in: .whitespaces).split(separator: " ")
                }
            let names = options.map { String($0[0]) }
            for (option, words) in zip(names, options) {
                // A value placeholder is upper case or a choice (one|all); the help line follows two spaces later.
                let takesValue = words.count > 1 && (words[1].uppercased() == words[1] || words[1].contains("|"))
                let value = takesValue ? [String(words[1].split(separator: "|")[0])] : []
                let parsed = try runCommand([Paths.cast, verb, option] + value + ["--help"])
                XCTAssertEqual(parsed.status, 0, "cast \(verb) \(option): \(parsed.stderr)")
            }
            for word in synopsis.split(separator: " ") where word.hasPrefix("[--") || word.hasPrefix("--") {
                let name = word.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).split(separator: " ")[0]
                XCTAssertTrue(names.contains(String(name)), "\(synopsis) names \(name), which its options do not list")
            }
            let examples = try XCTUnwrap(sections.first { $0.hasPrefix("examples:") }, help.stdout)
                .split(separator: "\n").dropFirst().map {
                    String($0.components(separatedBy: "| ").last!.drop { $0 == " " })
                }
            XCTAssertFalse(examples.isEmpty, verb)
            for example in examples {
                let words = shellWords(example)
                XCTAssertEqual(words.first, "cast", example)
                XCTAssertTrue(words.count > 1 && (words[1] == verb || words[1] == "play"), example)
                let parsed = try runCommand([Paths.cast] + words.dropFirst() + ["--help"])
                XCTAssertEqual(parsed.status, 0, "\(example): \(parsed.stderr)")
            }
        }
        let play = try runCommand([Paths.cast, "play", "--help"])
        XCTAssertEqual(play.stdout, try runCommand([Paths.cast, "queue", "--help"]).stdout, "play is queue")
    }

    /// Words of a command line as a shell splits them (double quotes only: what the examples use).
    private func shellWords(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var inWord = false
        for character in line {
            if character == "\"" {
                quoted.toggle()
                inWord = true
            } else if character == " " && !quoted {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// docs/man/ holds what `cast --man` and `castd --man` print (made from the same text as --help), and groff
    /// renders both without a warning.
    func testManualPagesAreCurrentAndRenderCleanly() throws {
        for (program, page) in [(Paths.cast, "docs/man/cast.1"), (Paths.castd, "docs/man/castd.8")] {
            let printed = try runCommand([program, "--man"])
            XCTAssertEqual(printed.status, 0, printed.stderr)
            let committed = try String(contentsOf: Paths.package.appendingPathComponent(page), encoding: .utf8)
            XCTAssertEqual(printed.stdout, committed, "\(page) is stale: run \(program) --man > \(page)")
            let rendered = try runCommand([
                "groff", "-man", "-Tutf8", "-k", "-ww", "-z", Paths.package.appendingPathComponent(page).path,
            ])
            XCTAssertEqual(rendered.status, 0)
            XCTAssertEqual(rendered.stderr, "", page)
        }
        let cast = try String(contentsOf: Paths.package.appendingPathComponent("docs/man/cast.1"), encoding: .utf8)
        for verb in [
            "list", "send", "queue", "status", "pause", "resume", "stop", "seek", "volume", "watch", "pair", "unpair",
            "config",
        ] {
            XCTAssertTrue(cast.contains("\n.SS \"\(verb) "), "\(verb) has no section in cast(1)")
        }
    }

    /// An idle castd that pairs senders sleeps: nothing wakes any of its threads while nothing happens. Its revocation
    /// watcher waits on an inotify watch of the state directory; it had looked at the pairing store every 250 ms (68
    /// context switches in 4 s on the lab machine, 0 now). A change of the store is still seen at once
    /// (RevocationTests).
    func testAnIdleCastdDoesNotWake() throws {
        let state = NSTemporaryDirectory() + "cast-idle-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let castd = try Daemon(
            [
                Paths.castd, "--state-dir", state, "--port", "0", "--listen", "127.0.0.1", "--no-advertise",
                "--video-out",
                "none", "--audio-device", "none",
            ], environment: [:])
        defer { castd.stop() }
        XCTAssertNotNil(castd.waitForLine(containing: "listening on port", timeout: 20), "\(castd.output)")
        Thread.sleep(forTimeInterval: 1)  // start-up settles (the spare decoder worker is its own process)
        func switches() -> [String: Int] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(castd.pid)/task")) ?? []
            var counts: [String: Int] = [:]
            for task in tasks {
                let status =
                    (try? String(contentsOfFile: "/proc/\(castd.pid)/task/\(task)/status", encoding: .utf8)) ?? ""
                counts[task] = status.split(separator: "\n").filter { $0.contains("ctxt_switches") }
                    .compactMap {
                        $0.split(separator: "\t").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                    }
                    .reduce(0, +)
            }
            return counts
        }
        let before = switches()
        Thread.sleep(forTimeInterval: 4)
        let after = switches()
        XCTAssertFalse(after.isEmpty, "castd's threads were not found")
        let woken = after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
        print("an idle castd's threads were woken \(woken) times in 4 s (\(after.count) threads)")
        XCTAssertLessThan(woken, 8, "a timer that looks every 250 ms wakes 16 times in 4 s")
        XCTAssertFalse(castd.output.contains { $0.contains("looking at the pairing store every") }, "\(castd.output)")
    }

    /// A FIFO in the identity key's place used to hang castd's start for good (the open waited for a writer);
    /// a world-writable state directory was used as it was (issue #13, "Trust store").
    func testCastdRefusesAFIFOKeyFileAndAWritableStateDirectoryAtOnce() throws {
        let state = NSTemporaryDirectory() + "cast-fifo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        XCTAssertEqual(mkfifo(state + "/identity.pem", 0o600), 0)
        let arguments = [
            Paths.castd, "--state-dir", state, "--port", "0", "--listen", "127.0.0.1", "--no-advertise", "--video-out",
            "none", "--audio-device", "none",
        ]
        let fifo = try runCommand(arguments, timeout: 10)
        print(String(format: "castd with a FIFO as its key file exited after %.2f s", fifo.seconds))
        XCTAssertEqual(fifo.status, 1, fifo.stderr)
        XCTAssertTrue(fifo.stderr.contains("\(state)/identity.pem is not a regular file"), fifo.stderr)
        XCTAssertLessThan(fifo.seconds, 3, "a hang is cut off at 10 s")

        XCTAssertEqual(unlink(state + "/identity.pem"), 0)
        XCTAssertEqual(chmod(state, 0o777), 0)
        let writable = try runCommand(arguments, timeout: 10)
        XCTAssertEqual(writable.status, 1, writable.stderr)
        XCTAssertTrue(writable.stderr.contains("directory \(state) has mode 0777"), writable.stderr)
        XCTAssertTrue(writable.stderr.contains("chmod go-w \(state)"), writable.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state + "/identity.pem"), "no key is made there")

        // The password is a secret of the same kind: a FIFO in its place is refused at once too.
        XCTAssertEqual(chmod(state, 0o700), 0)
        XCTAssertEqual(mkfifo(state + "/password", 0o600), 0)
        let password = try runCommand(
            arguments + ["--auth", "password", "--password-file", state + "/password"], timeout: 10)
        XCTAssertEqual(password.status, 2, password.stderr)
        XCTAssertTrue(password.stderr.contains("\(state)/password is not a regular file"), password.stderr)
    }

    func testCastdListsTheAudioDevicesALSAOffers() throws {
        // With the system's ALSA configuration (not the tests' capture one): at least `null` exists.
        let result = try runCommand(["env", "-u", "ALSA_CONFIG_PATH", Paths.castd, "--list-audio-devices"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.split(separator: "\n").contains("null"), result.stdout)
        XCTAssertTrue(result.stdout.contains("    Discard all samples"), result.stdout)
    }

    func testSystemdAcceptsTheUnitFile() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            throw XCTSkip("systemd-analyze is not installed (scripts/setup installs it)")
        }
        let unit = try String(
            contentsOf: Paths.package.appendingPathComponent("Receiver/castd.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("Restart=on-failure"))
        XCTAssertTrue(unit.contains("ExecReload=/bin/kill -HUP $MAINPID"))
        // verify checks that ExecStart exists: point it at the built binary.
        let path = NSTemporaryDirectory() + "castd-\(getpid()).service"
        try unit.replacingOccurrences(of: "/usr/local/bin/castd", with: Paths.castd)
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let verify = try runCommand(["systemd-analyze", "verify", path], timeout: 60)
        XCTAssertEqual(verify.status, 0, verify.stderr)
        XCTAssertEqual(verify.stderr, "", "systemd-analyze complained")
    }

    func testConfigFileFlagsWinAndSIGHUPRenames() throws {
        let lab = try Lab("e2c\(getpid() % 100000)")
        defer { lab.tearDown() }
        let work = NSTemporaryDirectory() + "cast-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let config = "\(work)/castd.conf"
        try "# the attic box\nname = Attic\nport = 7200\nauth = none\nvideo-out = none\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--config", config, "--port", "7100", "--state-dir", "\(work)/state", "--audio-device",
                "none",
            ])
        XCTAssertNotNil(receiver.waitForLine(containing: "listening on port 7100"), "flag must win: \(receiver.output)")
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as \"Attic\""), "\(receiver.output)")

        try "name = Cellar\nport = 7200\nauth = none\nvideo-out = none\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        kill(receiver.pid, SIGHUP)
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as \"Cellar\""), "\(receiver.output)")
        var names: [String] = []
        let deadline = Date().addingTimeInterval(5)
        repeat {
            let list = try lab.run(
                on: .phone, [Paths.cast, "list", "--json"], environment: ["XDG_CONFIG_HOME": "\(work)/sender"])
            let entries = (try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]) ?? []
            names = entries.compactMap { $0["name"] as? String }
        } while names != ["Cellar"] && Date() < deadline
        XCTAssertEqual(names, ["Cellar"])
        XCTAssertTrue(receiver.isRunning)

        // A broken config on SIGHUP is reported and changes nothing.
        try "name = Cellar\nthis is not a setting\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(receiver.pid, SIGHUP)
        XCTAssertNotNil(receiver.waitForLine(containing: "keeping the running configuration"), "\(receiver.output)")
        XCTAssertTrue(receiver.isRunning)
    }
}
