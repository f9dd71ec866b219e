public import CastCommandLine
public import CastMedia
public import CastProtocol
import Foundation

/// castd's settings: its flags over its config file, every value validated once, here. `castd`'s `main.swift` only
/// parses them, acts on the command (`--help`, `--list-paired`, ...) and starts a `Receiver` with `configuration`;
/// SIGHUP parses them again and applies what can change while running. A pure value: the only thing it reads is the
/// config file, and tests drive it with arguments, an environment and files of their own.
public struct ReceiverSettings: Sendable {
    /// What castd was asked to do.
    public enum Command: Sendable, Equatable {
        /// Serve (the default).
        case run
        /// Print the usage (`--help`) or the manual page (`--man`, the only argument) and exit.
        case help, manual
        /// Print the paired senders, or forget one (`--unpair ID`), and exit.
        case listPaired
        case unpair(String)
        /// Print the ALSA PCMs and exit.
        case listAudioDevices
    }

    /// What castd's process was started with, besides its arguments.
    public struct Environment: Sendable {
        /// Environment variables (`DISPLAY`, `WAYLAND_DISPLAY`, `XDG_STATE_HOME`, `HOME`).
        public var variables: [String: String]
        /// Whether castd runs as root (its state lives in /var/lib/castd then).
        public var isRoot: Bool
        /// The default name: the host's name.
        public var hostName: String
        /// The config file read when `--config` is not given and it exists.
        public var defaultConfigFile = "/etc/castd.conf"

        /// Creates an environment.
        public init(variables: [String: String], isRoot: Bool, hostName: String) {
            self.variables = variables
            self.isRoot = isRoot
            self.hostName = hostName
        }

        /// This process's.
        public static var current: Environment {
            var buffer = [CChar](repeating: 0, count: 256)
            let host =
                gethostname(&buffer, buffer.count) == 0
                ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "castd"
            return Environment(
                variables: ProcessInfo.processInfo.environment, isRoot: getuid() == 0,
                hostName: host.isEmpty ? "castd" : host)
        }
    }

    /// The command.
    public var command: Command = .run
    /// The merged values by option name (a switch that is on has an empty value): SIGHUP compares them to say which
    /// changes need a restart.
    public var values: [String: String] = [:]
    /// The receiver's configuration, but for what `main` opens itself (`--events`, the password file's secret).
    public var configuration: ReceiverConfiguration
    /// `--events`: the path (or `-`) of the event log, opened by `main`.
    public var eventsPath: String?
    /// `--password-file` for `--auth password`.
    public var passwordFile: String?

    /// A command line or config file that cannot be used: castd says so and exits 2.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, and where.
        public let message: String
        /// Creates a problem.
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// The options, as `--help` and the manual page list them and the parser and config file accept them.
    public static let options: [OptionSpec] = [
        OptionSpec("name", value: "NAME", help: "friendly name, advertised over mDNS (default: the host name)"),
        OptionSpec("port", value: "N", help: "TCP port to listen on; 0 picks a free port (default 7100)"),
        OptionSpec(
            "listen", value: "ADDRESS", help: "address to listen on (default :: = every address, IPv4 and IPv6)"),
        OptionSpec("audio-device", value: "PCM", help: "ALSA PCM to play audio on, or none (default: default)"),
        OptionSpec(
            "audio-channels", value: "N",
            help: "channels the PCM plays, 1 to 8; sources are downmixed to them (default 2)"),
        OptionSpec(
            "audio-clock", value: "MODE",
            help: "who paces audio: device (a sound card), engine (castd's clock) or auto (default: by the PCM)"),
        OptionSpec(
            "video-out", value: "MODE",
            help: "window, fullscreen, none or framemd5:FILE (default: window with a display, else none)"),
        OptionSpec(
            "scaling", value: "MODE",
            help: "how the window fits pictures: aspectFit (default), aspectFill, fill or none"),
        OptionSpec(
            "timing-log", value: "FILE",
            help: "write when each video frame and audio period was presented (A/V sync checks)"),
        OptionSpec("auth", value: "MODE", help: "how senders are admitted: pin (default), password or none"),
        OptionSpec("password-file", value: "FILE", help: "the secret for --auth password (mode 0600 or stricter)"),
        OptionSpec("state-dir", value: "DIR", help: "where the identity is kept (default /var/lib/castd as root)"),
        OptionSpec("events", value: "FILE", help: "write every event as a JSON line to FILE, or - for standard output"),
        OptionSpec(
            "config", value: "FILE", help: "config file of key = value lines (default /etc/castd.conf when it exists)"),
        OptionSpec("takeover", value: "POLICY", help: "a second sender while one plays: allow (default) or deny"),
        OptionSpec("sender-timeout", value: "SEC", help: "end a session whose sender is silent this long (default 10)"),
        OptionSpec(
            "pairing-attempts", value: "N",
            help: "failed pairing attempts in a row that close pairing until SIGHUP (1-10, default 10)"),
        OptionSpec(
            "decoder-isolation", value: "MODE",
            help: "on (default): decode each session in a worker process with limits; off"),
        OptionSpec(
            "decoder-cpu", value: "SEC",
            help: "CPU seconds a decoder worker may use while playback does not move on (default 60)"),
        OptionSpec(
            "decoder-memory", value: "MIB",
            help: "the decoder worker's address space limit in MiB (default 4096; at least 512, 1024 with a window)"),
        OptionSpec("no-advertise", help: "do not advertise over mDNS"),
        OptionSpec("airplay-video", help: "also accept AirPlay video clients (no pairing: see docs/security.md)"),
        OptionSpec(
            "airplay-port", value: "N", help: "the AirPlay video port with --airplay-video; 0 picks one (default 7000)"),
        OptionSpec("list-paired", help: "list the paired senders and exit"),
        OptionSpec("list-audio-devices", help: "list the ALSA PCMs --audio-device accepts and exit"),
        OptionSpec("unpair", value: "ID", help: "forget the paired sender with this id (or unique prefix) and exit"),
        OptionSpec("help", help: "show this help"),
    ]

    /// What `castd --help` prints.
    public static let usage = """
        usage: castd [--name NAME] [--port N] [--audio-device PCM] [--video-out MODE] [--scaling MODE]
                     [--auth pin|password|none] [--password-file F] [--state-dir DIR]
                     [--events FILE|-] [--config F] [--airplay-video [--airplay-port N]]

        The Cast receiver: advertises itself over mDNS as _castd._tcp, accepts senders over
        TLS 1.3 and reports everything that happens to playback back to them.

        options:
        \(OptionSpec.helpTable(options, minimumColumn: 26))

        examples:
          castd --name "Living Room"
          castd --auth none --port 0 --video-out none --state-dir /tmp/castd
        """

    /// The settings from castd's arguments (without the program's name) over its config file.
    public static func parse(
        _ arguments: [String], environment: Environment = .current
    ) throws(Problem) -> ReceiverSettings {
        if arguments == ["--man"] { return ReceiverSettings(command: .manual, environment: environment) }
        let parsed: ParsedArguments
        do {
            parsed = try parseArguments(arguments, options: options)
        } catch {
            throw Problem("\(error.message) (see castd --help)")
        }
        if parsed.has("help") { return ReceiverSettings(command: .help, environment: environment) }
        if let extra = parsed.positionals.first { throw Problem("unexpected argument '\(extra)' (see castd --help)") }
        var values = try configFileValues(
            explicit: parsed.options["config"], defaultPath: environment.defaultConfigFile)
        values.merge(parsed.options) { _, flag in flag }
        return try ReceiverSettings(values: values, environment: environment)
    }

    /// The settings of a command that prints and exits, before any value is looked at.
    private init(command: Command, environment: Environment) {
        self.command = command
        configuration = ReceiverConfiguration(
            name: environment.hostName, stateDirectory: "/nonexistent", limits: .init())
    }

    /// Validates every value; the first problem is thrown.
    private init(values: [String: String], environment: Environment) throws(Problem) {
        self.values = values
        let name = values["name"] ?? environment.hostName
        guard !name.isEmpty, name.utf8.count <= 63 else {
            throw Problem("--name must be 1 to 63 bytes (a DNS-SD instance name)")
        }
        guard let port = UInt16(values["port"] ?? "7100") else {
            throw Problem("--port must be a number from 0 to 65535")
        }
        guard let auth = AuthMode(rawValue: values["auth"] ?? "pin") else {
            throw Problem("--auth must be pin, password or none")
        }
        let hasDisplay = environment.variables["DISPLAY"] != nil || environment.variables["WAYLAND_DISPLAY"] != nil
        let video: VideoOutput
        // The default is a window where there is a display to put it on (as the contract says), else none.
        switch values["video-out"] ?? (hasDisplay ? "window" : "none") {
        case "none": video = .none
        case let mode where mode.hasPrefix("framemd5:") && mode.count > 9:
            video = .framemd5(path: String(mode.dropFirst(9)))
        case "window": video = .window
        case "fullscreen": video = .fullscreen
        default: throw Problem("--video-out must be window, fullscreen, none or framemd5:FILE")
        }
        let scaling = try Self.scalingMode(values)
        let audioDevice = values["audio-device"] ?? "default"
        guard !audioDevice.isEmpty, audioDevice.utf8.count <= 256 else {
            throw Problem("--audio-device must name an ALSA PCM or none")
        }
        guard let audioChannels = Int(values["audio-channels"] ?? "2"), (1...8).contains(audioChannels) else {
            throw Problem("--audio-channels must be a number from 1 to 8")
        }
        guard let audioClock = AudioClock(rawValue: values["audio-clock"] ?? "auto") else {
            throw Problem("--audio-clock must be device, engine or auto")
        }
        guard let takeover = TakeoverPolicy(rawValue: values["takeover"] ?? "allow") else {
            throw Problem("--takeover must be allow or deny")
        }
        var limits = ReceiverConfiguration.Limits()
        if let text = values["sender-timeout"] {
            guard let seconds = Double(text), seconds >= 1, seconds <= 3600 else {
                throw Problem("--sender-timeout must be a number of seconds from 1 to 3600")
            }
            limits.senderTimeout = .milliseconds(Int(seconds * 1000))
        }
        if let text = values["pairing-attempts"] {
            let most = PairingAttemptLimiter.defaultAttemptLimit
            guard let attempts = Int(text), (1...most).contains(attempts) else {
                throw Problem("--pairing-attempts must be a number from 1 to \(most)")
            }
            limits.pairingAttemptLimit = attempts
        }
        var airPlayPort: UInt16?
        if values["airplay-video"] != nil {
            guard let port = UInt16(values["airplay-port"] ?? "7000") else {
                throw Problem("--airplay-port must be a number from 0 to 65535")
            }
            airPlayPort = port
        } else if values["airplay-port"] != nil {
            throw Problem("--airplay-port needs --airplay-video")
        }
        eventsPath = values["events"]
        var engine = PlayerConfiguration(
            audio: audioDevice == "none" ? .none : .alsa(device: audioDevice), video: video,
            scalingMode: scaling, timingLog: values["timing-log"])
        engine.audioChannels = audioChannels
        engine.audioClock = audioClock
        engine.log = .standardError
        configuration = ReceiverConfiguration(
            name: name, port: port, listenAddress: values["listen"] ?? "::", auth: auth,
            stateDirectory: values["state-dir"] ?? Self.defaultStateDirectory(environment), takeover: takeover,
            advertise: values["no-advertise"] == nil, engine: engine, limits: limits, airPlayVideoPort: airPlayPort)
        configuration.decoderIsolation = try Self.decoderIsolation(values, video: video)
        // The password pairs a sender as the PIN does: no decoder worker may read it.
        configuration.decoderHiddenFiles = values["password-file"].map { [$0] } ?? []
        if values["list-audio-devices"] != nil {
            command = .listAudioDevices
        } else if let id = values["unpair"] {
            command = .unpair(id)
        } else if values["list-paired"] != nil {
            command = .listPaired
        } else if auth == .password {
            // Only serving needs the secret: --list-paired works with the daemon's usual config file.
            guard let file = values["password-file"] else {
                throw Problem("--auth password needs --password-file FILE")
            }
            passwordFile = file
        }
    }

    private static func scalingMode(_ values: [String: String]) throws(Problem) -> ScalingMode {
        guard let scaling = ScalingMode(rawValue: values["scaling"] ?? "aspectFit") else {
            throw Problem("--scaling must be aspectFit, aspectFill, fill or none")
        }
        return scaling
    }

    private static func decoderIsolation(_ values: [String: String], video: VideoOutput) throws(Problem)
        -> DecoderIsolation
    {
        switch values["decoder-isolation"] ?? "on" {
        case "off", "no", "false": return .off
        case "on", "yes", "true": break
        default: throw Problem("--decoder-isolation must be on or off")
        }
        var limits = DecoderLimits()
        if let text = values["decoder-memory"] {
            // The engine maps about 0.3 GiB before it decodes anything (the Swift runtime, FFmpeg, thread stacks).
            guard let mib = Int64(text), mib >= 512, mib <= 1 << 20 else {
                throw Problem("--decoder-memory must be a number of MiB from 512 to 1048576")
            }
            // A window's worker also maps SDL and the display's renderer: about 0.75 GiB at its peak (1080p, Xvfb).
            if mib < 1024, video == .window || video == .fullscreen {
                throw Problem("--decoder-memory must be at least 1024 MiB with --video-out window or fullscreen")
            }
            limits.addressSpace = mib << 20
        }
        if let text = values["decoder-cpu"] {
            guard let seconds = Int(text), seconds >= 1, seconds <= 86400 else {
                throw Problem("--decoder-cpu must be a number of seconds from 1 to 86400")
            }
            limits.cpuWithoutProgress = seconds
        }
        return .on(limits)
    }

    private static func defaultStateDirectory(_ environment: Environment) -> String {
        if environment.isRoot { return "/var/lib/castd" }
        let variables = environment.variables
        return (variables["XDG_STATE_HOME"] ?? ((variables["HOME"] ?? "/tmp") + "/.local/state")) + "/castd"
    }

    /// The config file's values: `--config FILE` must be readable; the default file is read when it exists.
    private static func configFileValues(explicit: String?, defaultPath: String) throws(Problem) -> [String: String] {
        let path = explicit ?? defaultPath
        guard explicit != nil || FileManager.default.fileExists(atPath: path) else { return [:] }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem("cannot read the config file \(path)")
        }
        let entries: [ConfigFile.Entry]
        do {
            entries = try ConfigFile.parse(String(decoding: data, as: UTF8.self))
        } catch {
            throw Problem("\(path): \(error)")
        }
        var values: [String: String] = [:]
        for entry in entries {
            guard entry.key != "config", let spec = options.first(where: { $0.name == entry.key }) else {
                throw Problem(
                    "\(path): line \(entry.line): unknown setting '\(entry.key)'"
                        + suggestion(for: entry.key, among: options.map(\.name)))
            }
            guard spec.value == nil else {
                values[entry.key] = entry.value
                continue
            }
            // A switch in the file is on or off by its value (an empty value is on): `airplay-video = no` must never
            // turn on the service it names.
            switch entry.value.lowercased() {
            case "", "yes", "true", "on", "1": values[entry.key] = ""
            case "no", "false", "off", "0": values[entry.key] = nil
            default:
                throw Problem(
                    "\(path): line \(entry.line): '\(entry.key)' is a switch: yes or no, not '\(entry.value)'")
            }
        }
        return values
    }

    /// What a reload (SIGHUP) changes on a running receiver: the name and the scaling mode; `needRestart` names the
    /// other settings that differ from the running ones.
    public func reload(over running: ReceiverSettings) -> (name: String, scaling: ScalingMode, needRestart: [String]) {
        let live: Set<String> = ["name", "scaling"]
        let changed = Set(values.keys).union(running.values.keys)
            .filter { !live.contains($0) && values[$0] != running.values[$0] }.sorted()
        return (configuration.name, configuration.engine.scalingMode, changed)
    }
}
