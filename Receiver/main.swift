// castd: the Cast receiver daemon. Arguments, config file and signals; the service is CastReceiver.
import CastCommandLine
import CastMedia
import CastProtocol
import CastReceiver
import CastSecurity
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// A decoder worker (castd re-executed by itself for one session, docs/decoder-worker.md) does nothing else. The mode
// is not in --help, and refuses to run unless castd started it.
if SessionWorker.isRequested(CommandLine.arguments) {
    limitMallocArenas()
    SessionWorker.run(arguments: CommandLine.arguments)
}

let options: [OptionSpec] = [
    OptionSpec("name", value: "NAME", help: "friendly name, advertised over mDNS (default: the host name)"),
    OptionSpec("port", value: "N", help: "TCP port to listen on; 0 picks a free port (default 7100)"),
    OptionSpec("listen", value: "ADDRESS", help: "address to listen on (default :: = every address, IPv4 and IPv6)"),
    OptionSpec("audio-device", value: "PCM", help: "ALSA PCM to play audio on, or none (default: default)"),
    OptionSpec("audio-channels", value: "N", help: "channels the PCM plays, 1 to 8; sources are downmixed to them (default 2)"),
    OptionSpec("video-out", value: "MODE", help: "window, fullscreen, none or framemd5:FILE (default: window with a display, else none)"),
    OptionSpec("scaling", value: "MODE", help: "how the window fits pictures: aspectFit (default), aspectFill, fill or none"),
    OptionSpec("timing-log", value: "FILE", help: "write when each video frame and audio period was presented (A/V sync checks)"),
    OptionSpec("auth", value: "MODE", help: "how senders are admitted: pin (default), password or none"),
    OptionSpec("password-file", value: "FILE", help: "the secret for --auth password"),
    OptionSpec("state-dir", value: "DIR", help: "where the identity is kept (default /var/lib/castd as root)"),
    OptionSpec("events", value: "FILE", help: "write every event as a JSON line to FILE, or - for standard output"),
    OptionSpec("config", value: "FILE", help: "config file of key = value lines (default /etc/castd.conf when it exists)"),
    OptionSpec("takeover", value: "POLICY", help: "a second sender while one plays: allow (default) or deny"),
    OptionSpec("sender-timeout", value: "SEC", help: "end a session whose sender is silent this long (default 10)"),
    OptionSpec("pairing-attempts", value: "N", help: "failed pairing attempts in a row that close pairing until SIGHUP (1-10, default 10)"),
    OptionSpec("decoder-isolation", value: "MODE", help: "on (default): decode each session in a worker process with limits; off"),
    OptionSpec("decoder-cpu", value: "SEC", help: "CPU seconds a decoder worker may use while playback does not move on (default 60)"),
    OptionSpec("decoder-memory", value: "MIB", help: "the decoder worker's address space limit in MiB (default 4096; at least 512, 1024 with a window)"),
    OptionSpec("no-advertise", help: "do not advertise over mDNS"),
    OptionSpec("airplay-video", help: "also accept AirPlay video clients (no pairing: see docs/security.md)"),
    OptionSpec("airplay-port", value: "N", help: "the AirPlay video port with --airplay-video; 0 picks one (default 7000)"),
    OptionSpec("list-paired", help: "list the paired senders and exit"),
    OptionSpec("list-audio-devices", help: "list the ALSA PCMs --audio-device accepts and exit"),
    OptionSpec("unpair", value: "ID", help: "forget the paired sender with this id (or unique prefix) and exit"),
    OptionSpec("help", help: "show this help"),
]

let usage = """
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

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("castd: \(message)\n".utf8))
    exit(code)
}

/// A command line or config file that cannot be used.
struct SettingsProblem: Error {
    let message: String
}

/// Flags from the command line over settings from the config file. `--help` prints and exits.
func settings() throws(SettingsProblem) -> [String: String] {
    if Array(CommandLine.arguments.dropFirst()) == ["--man"] {
        print(manualPage().roff, terminator: "")
        exit(0)
    }
    let parsed: ParsedArguments
    do {
        parsed = try parseArguments(CommandLine.arguments.dropFirst(), options: options)
    } catch {
        throw SettingsProblem(message: "\(error.message) (see castd --help)")
    }
    if parsed.has("help") {
        print(usage)
        exit(0)
    }
    if let extra = parsed.positionals.first { throw SettingsProblem(message: "unexpected argument '\(extra)' (see castd --help)") }
    var merged: [String: String] = [:]
    let explicitConfig = parsed.options["config"]
    let configPath = explicitConfig ?? "/etc/castd.conf"
    if explicitConfig != nil || FileManager.default.fileExists(atPath: configPath) {
        guard let data = FileManager.default.contents(atPath: configPath) else {
            throw SettingsProblem(message: "cannot read the config file \(configPath)")
        }
        let entries: [ConfigFile.Entry]
        do {
            entries = try ConfigFile.parse(String(decoding: data, as: UTF8.self))
        } catch {
            throw SettingsProblem(message: "\(configPath): \(error)")
        }
        for entry in entries {
            guard entry.key != "config", let spec = options.first(where: { $0.name == entry.key }) else {
                throw SettingsProblem(
                    message: "\(configPath): line \(entry.line): unknown setting '\(entry.key)'"
                        + suggestion(for: entry.key, among: options.map(\.name)))
            }
            guard spec.value == nil else {
                merged[entry.key] = entry.value
                continue
            }
            // A flag in the file is on or off by its value (an empty value is on): `airplay-video = no` must
            // never turn on the service it names.
            switch entry.value.lowercased() {
            case "", "yes", "true", "on", "1": merged[entry.key] = ""
            case "no", "false", "off", "0": merged[entry.key] = nil
            default:
                throw SettingsProblem(
                    message: "\(configPath): line \(entry.line): '\(entry.key)' is a switch: yes or no, not '\(entry.value)'")
            }
        }
    }
    merged.merge(parsed.options) { _, flag in flag }
    return merged
}

func defaultStateDirectory() -> String {
    if getuid() == 0 { return "/var/lib/castd" }
    let env = ProcessInfo.processInfo.environment
    let base = env["XDG_STATE_HOME"] ?? ((env["HOME"] ?? "/tmp") + "/.local/state")
    return base + "/castd"
}

func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count) == 0 else { return "castd" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

// Each session runs the engine on new threads, and glibc gives threads their own malloc arenas (up to 8 per core),
// each keeping the high-water mark of what it once held; and it raises its mmap threshold to the largest block
// freed, so decoded frames end up in those arenas. A receiver that plays one file after another (and hostile ones:
// docs/faults.md) then grows by megabytes per session. Two arenas and a fixed threshold (frames and packet buffers
// are mapped and unmapped) keep its memory flat; the cost is a little lock contention between threads.
// (malloc.h is not part of Swift's Glibc module: mallopt is looked up, with its option numbers from malloc.h.)
func limitMallocArenas() {
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        let arenaMaximum: Int32 = -8  // M_ARENA_MAX
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        _ = mallopt(arenaMaximum, 2)
        _ = mallopt(mmapThreshold, 128 * 1024)
    }
}

let values: [String: String]
do throws(SettingsProblem) {
    values = try settings()
} catch {
    fail(error.message, code: 2)
}
let name = values["name"] ?? hostName()
guard !name.isEmpty, name.utf8.count <= 63 else { fail("--name must be 1 to 63 bytes (a DNS-SD instance name)", code: 2) }
guard let port = UInt16(values["port"] ?? "7100") else { fail("--port must be a number from 0 to 65535", code: 2) }
guard let auth = AuthMode(rawValue: values["auth"] ?? "pin") else {
    fail("--auth must be pin, password or none", code: 2)
}
let video: VideoOutput
// The default is a window where there is a display to put it on (as the contract says), else none.
let environment = ProcessInfo.processInfo.environment
let hasDisplay = environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil
switch values["video-out"] ?? (hasDisplay ? "window" : "none") {
case "none": video = .none
case let mode where mode.hasPrefix("framemd5:") && mode.count > 9: video = .framemd5(path: String(mode.dropFirst(9)))
case "window": video = .window
case "fullscreen": video = .fullscreen
default: fail("--video-out must be window, fullscreen, none or framemd5:FILE", code: 2)
}
guard let scaling = ScalingMode(rawValue: values["scaling"] ?? "aspectFit") else {
    fail("--scaling must be aspectFit, aspectFill, fill or none", code: 2)
}
let audioDevice = values["audio-device"] ?? "default"
guard !audioDevice.isEmpty, audioDevice.utf8.count <= 256 else { fail("--audio-device must name an ALSA PCM or none", code: 2) }
let audio: AudioOutput = audioDevice == "none" ? .none : .alsa(device: audioDevice)
guard let audioChannels = Int(values["audio-channels"] ?? "2"), (1...8).contains(audioChannels) else {
    fail("--audio-channels must be a number from 1 to 8", code: 2)
}
var events: EventLog?
if let path = values["events"] {
    do { events = try EventLog(path: path) } catch { fail("\(error)", code: 2) }
}
if values["list-audio-devices"] != nil {
    let devices = AudioDevices.list()
    if devices.isEmpty { print("no ALSA PCMs found") }
    for device in devices {
        let lines = device.description.split(separator: "\n")
        print(device.name + (lines.isEmpty ? "" : "\n" + lines.map { "    " + $0 }.joined(separator: "\n")))
    }
    exit(0)
}

let stateDirectory = values["state-dir"] ?? defaultStateDirectory()
guard let takeover = TakeoverPolicy(rawValue: values["takeover"] ?? "allow") else {
    fail("--takeover must be allow or deny", code: 2)
}
var limits = ReceiverConfiguration.Limits()
if let text = values["sender-timeout"] {
    guard let seconds = Double(text), seconds >= 1, seconds <= 3600 else {
        fail("--sender-timeout must be a number of seconds from 1 to 3600", code: 2)
    }
    limits.senderTimeout = .milliseconds(Int(seconds * 1000))
}
if let text = values["pairing-attempts"] {
    guard let attempts = Int(text), (1...PairingAttemptLimiter.defaultAttemptLimit).contains(attempts) else {
        fail("--pairing-attempts must be a number from 1 to \(PairingAttemptLimiter.defaultAttemptLimit)", code: 2)
    }
    limits.pairingAttemptLimit = attempts
}
let decoderIsolation: DecoderIsolation
switch values["decoder-isolation"] ?? "on" {
case "on", "yes", "true":
    var decoderLimits = DecoderLimits()
    if let text = values["decoder-memory"] {
        // The engine maps about 0.3 GiB before it decodes anything (the Swift runtime, FFmpeg, thread stacks).
        guard let mib = Int64(text), mib >= 512, mib <= 1 << 20 else {
            fail("--decoder-memory must be a number of MiB from 512 to 1048576", code: 2)
        }
        // A window's worker also maps SDL and the display's renderer: about 0.75 GiB at its peak (1080p under Xvfb).
        if mib < 1024, video == .window || video == .fullscreen {
            fail("--decoder-memory must be at least 1024 MiB with --video-out window or fullscreen", code: 2)
        }
        decoderLimits.addressSpace = mib << 20
    }
    if let text = values["decoder-cpu"] {
        guard let seconds = Int(text), seconds >= 1, seconds <= 86400 else {
            fail("--decoder-cpu must be a number of seconds from 1 to 86400", code: 2)
        }
        decoderLimits.cpuWithoutProgress = seconds
    }
    decoderIsolation = .on(decoderLimits)
case "off", "no", "false": decoderIsolation = .off
default: fail("--decoder-isolation must be on or off", code: 2)
}
var airPlayPort: UInt16?
if values["airplay-video"] != nil {
    guard let port = UInt16(values["airplay-port"] ?? "7000") else {
        fail("--airplay-port must be a number from 0 to 65535", code: 2)
    }
    airPlayPort = port
} else if values["airplay-port"] != nil {
    fail("--airplay-port needs --airplay-video", code: 2)
}

if values["list-paired"] != nil || values["unpair"] != nil {
    do {
        let store = try PairedSenders.load(directory: stateDirectory)
        if let id = values["unpair"] {
            switch try store.remove(id) {
            case .removed(let sender): print("unpaired \(printable(sender.name)) (id \(sender.id))")
            case .notFound: fail("no paired sender with id \(id)", code: 1)
            case .ambiguous(let matches): fail("\(id) matches several senders: \(matches.map(\.id).joined(separator: ", "))", code: 1)
            }
        } else {
            let senders = try store.list()
            if senders.isEmpty { print("no paired senders") }
            let formatter = ISO8601DateFormatter()
            for sender in senders {
                print("\(sender.id)  \(formatter.string(from: sender.pairedAt))  \(printable(sender.name))")
            }
        }
        exit(0)
    } catch {
        fail("\(error)", code: 1)
    }
}

var password: String?
if auth == .password {
    guard let file = values["password-file"] else { fail("--auth password needs --password-file FILE", code: 2) }
    let data: [UInt8]
    do {
        data = try SecretFile.read(file, limit: 4096)
    } catch {
        fail("cannot read the password file: \(error)", code: 2)
    }
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    guard !text.isEmpty else { fail("the password file \(file) is empty", code: 2) }
    password = text
}

signal(SIGPIPE, SIG_IGN)
limitMallocArenas()
let logger = Logger.standardError()
logger.takeFFmpegLines()
var configuration = ReceiverConfiguration(
    name: name, port: port, listenAddress: values["listen"] ?? "::", auth: auth, password: password,
    stateDirectory: stateDirectory, takeover: takeover, advertise: values["no-advertise"] == nil,
    engine: PlayerConfiguration(audio: audio, video: video, scalingMode: scaling, timingLog: values["timing-log"]),
    events: events, limits: limits, airPlayVideoPort: airPlayPort)
configuration.engine.audioChannels = audioChannels
configuration.decoderIsolation = decoderIsolation
// The password pairs a sender as the PIN does: no decoder worker may read it.
configuration.decoderHiddenFiles = values["password-file"].map { [$0] } ?? []
let receiver: Receiver
do {
    receiver = try Receiver(configuration: configuration, logger: logger)
    try receiver.start()
} catch {
    fail("\(error)", code: 1)
}
switch decoderIsolation {
case .off: logger.info("decoder isolation off: sessions decode inside castd")
case .on(let limits):
    logger.info("decoder isolation on: each session decodes in a worker process (address space \(limits.addressSpace >> 20) MiB)")
}
switch auth {
case .none:
    logger.warning("auth none: any sender on this network can control this receiver")
case .pin:
    logger.info("paired senders only; pair with: cast pair \"\(name)\" (a PIN is shown here for each attempt)")
case .password:
    logger.info("paired senders only; pair with: cast pair \"\(name)\" and the password")
}

/// Kept alive for the life of the process; touched only on the main thread.
nonisolated(unsafe) var signalSources: [any DispatchSourceSignal] = []
// SIGHUP re-reads the config file (flags still win) and applies what can change while running:
// the name and the scaling mode. Other settings need a restart, and the log says so.
signal(SIGHUP, SIG_IGN)
let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .main)
hangup.setEventHandler {
    // The pairing store is watched anyway; a hangup after editing it need not wait for the next look.
    receiver.closeRevokedConnections()
    // The operator's answer to a pairing closed by failed attempts (docs/security.md, "Rate limit").
    receiver.reopenPairing()
    let reloaded: [String: String]
    do throws(SettingsProblem) {
        reloaded = try settings()
    } catch {
        logger.error("SIGHUP: \(error.message); keeping the running configuration")
        return
    }
    let newName = reloaded["name"] ?? hostName()
    guard !newName.isEmpty, newName.utf8.count <= 63 else {
        logger.error("SIGHUP: the new name is not 1 to 63 bytes; keeping \"\(receiver.name)\"")
        return
    }
    guard let newScaling = ScalingMode(rawValue: reloaded["scaling"] ?? "aspectFit") else {
        logger.error("SIGHUP: scaling must be aspectFit, aspectFill, fill or none; keeping the running configuration")
        return
    }
    logger.info("SIGHUP: configuration reloaded")
    receiver.rename(to: newName)
    receiver.setScalingMode(newScaling)
    let live: Set<String> = ["name", "scaling"]
    let changed = reloaded.filter { !live.contains($0.key) && values[$0.key] != $0.value }.map(\.key).sorted()
    if !changed.isEmpty { logger.warning("SIGHUP: \(changed.joined(separator: ", ")) take effect after a restart") }
}
hangup.resume()
signalSources.append(hangup)

for signalNumber in [SIGINT, SIGTERM] {
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        logger.info("stopping")
        // Senders are told (their session finishes) before the process goes.
        receiver.shutdown()
        exit(0)
    }
    source.resume()
    signalSources.append(source)
}
dispatchMain()
