// Output and environment of cast: printing, JSON, where the sender keeps its identity.
import CastCommandLine
import CastProtocol
import CastSecurity
import CastSender
import CastSystem
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes `line` and a newline to standard output.
func output(_ line: String) {
    write(line + "\n", to: STDOUT_FILENO)
}

/// Writes `text` to standard error.
func writeError(_ text: String) {
    write(text, to: STDERR_FILENO)
}

/// Writes all of `text` to `fd`, again after a partial write or a signal; a closed pipe (`cast list | head`) or a
/// full disk ends the write quietly, as it did through `FileHandle`: there is nobody left to tell.
func write(_ text: String, to fd: Int32) {
    try? WholeFile.write(fd, Array(text.utf8))
}

func browseTimeout(_ arguments: ParsedArguments) throws(CastError) -> Duration {
    guard let text = arguments.options["timeout"] else { return .seconds(2) }
    guard let seconds = Double(text), seconds > 0, seconds <= 60 else {
        throw CastError(.usage, "--timeout must be a number of seconds from 0 to 60")
    }
    return .milliseconds(Int(seconds * 1000))
}

/// An environment variable (getenv: `ProcessInfo.environment` copies the whole environment into a dictionary, a
/// fiftieth of `cast status`'s start-up).
func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

func senderConfigDirectory() -> String {
    (environment("XDG_CONFIG_HOME") ?? ((environment("HOME") ?? "/tmp") + "/.config")) + "/cast"
}

/// `text` and spaces up to `width` characters (never cut), without NSString's `padding(toLength:withPad:startingAt:)`.
func padded(_ text: String, to width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}

/// `value` with `digits` decimals (and a sign when `sign`), as `%.Nf` / `%+.Nf` print it, without `String(format:)`
/// (which goes through Foundation's C varargs and locale machinery at every call).
func fixed(_ value: Double, digits: Int, sign: Bool = false) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : (sign ? "+inf" : "inf")) }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e15 else { return String(value) }
    let whole = Int(scaled)
    let negative = value < 0 && whole != 0
    var text = String(whole / Int(scale))
    if digits > 0 {
        let fraction = String(whole % Int(scale))
        text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
    return (negative ? "-" : (sign ? "+" : "")) + text
}

func senderName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    let host =
        gethostname(&buffer, buffer.count) == 0
        ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
    return "\(environment("USER") ?? "user")@\(host)"
}

/// The HTTP credentials of `cast send`, from wherever the user gave them: `--user USER:PASS` (visible to every local
/// user in the process list), `--user-file FILE` (its first line; the file must not be readable by group or others),
/// or the environment's `CAST_USER` when neither is given and a source is an http(s) URL. The result carries them as
/// `--user`, which `cast send` checks and uses.
func resolvingCredentials(_ parsed: ParsedArguments) throws(CastError) -> ParsedArguments {
    var parsed = parsed
    if let file = parsed.options["user-file"] {
        guard parsed.options["user"] == nil else { throw CastError(.usage, "give --user or --user-file, not both") }
        let bytes: [UInt8]
        do {
            bytes = try SecretFile.read(file, limit: 4096)
        } catch {
            throw CastError(.usage, "cannot read the --user-file: \(error)")
        }
        let line = bytes.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        parsed.options["user"] = String(decoding: line, as: UTF8.self)
    } else if parsed.options["user"] == nil, let fromEnvironment = environment("CAST_USER"), !fromEnvironment.isEmpty,
        parsed.positionals.contains(where: { ["http://", "https://"].contains(where: $0.lowercased().hasPrefix) })
    {
        parsed.options["user"] = fromEnvironment
    }
    return parsed
}

/// The sender's settings (`cast config`).
func settings() throws(CastError) -> CastSettings {
    try CastSettings.load(configDirectory: senderConfigDirectory())
}

/// The receiver a verb acts on: `given` (a name, id, prefix, HOST:PORT or an alias from `cast config`),
/// or when nil the default receiver, or with no default the only receiver in sight.
func resolveReceiver(_ given: String?, _ arguments: ParsedArguments, includingSpeakers: Bool = false)
    throws(CastError) -> ReceiverDescription
{
    try ReceiverBrowser.resolve(
        settings().resolve(given), timeout: browseTimeout(arguments), includingSpeakers: includingSpeakers)
}

/// `resolveReceiver`, connected: a paired receiver named exactly is tried at its last address while discovery
/// runs (`ReceiverConnection.reach`).
func reachReceiver(_ given: String?, _ arguments: ParsedArguments, includingSpeakers: Bool = false)
    throws(CastError) -> ReachedReceiver
{
    try ReceiverConnection.reach(
        settings().resolve(given), browseTimeout: browseTimeout(arguments), includingSpeakers: includingSpeakers,
        configDirectory: senderConfigDirectory(), senderName: senderName())
}

/// A Cast receiver (never an AirPlay speaker: speakers are not asked for), its connection open and its key checked.
func reachCastReceiver(_ given: String?, _ arguments: ParsedArguments) throws(CastError) -> ReceiverConnection {
    guard case .connected(let connection) = try reachReceiver(given, arguments) else {
        preconditionFailure("a speaker is reached only when speakers are asked for")
    }
    return connection
}

/// Splits a verb's positionals `[NAME] VALUE…` into the receiver (nil when left out) and `values` values.
func receiverAndValues(_ arguments: ParsedArguments, verb: String, values: Int = 0, valueName: String = "a value")
    throws(CastError) -> (receiver: String?, values: [String])
{
    let positionals = arguments.positionals
    switch positionals.count {
    case values: return (nil, positionals)
    case values + 1: return (positionals[0], Array(positionals.dropFirst()))
    default:
        throw CastError(.usage, "cast \(verb) takes [NAME]\(values > 0 ? " and \(valueName)" : "")")
    }
}

extension CastError {
    /// `cast`'s exit code for this failure (the contract in docs/user-guide.md): 1 playback, 2 usage, 3 no such
    /// receiver (or no mDNS), 4 not authorised, 5 connection lost, 6 receiver busy.
    var exitCode: Int32 {
        switch kind {
        case .usage: 2
        case .noSuchReceiver, .discovery: 3
        case .notAuthorised: 4
        case .connectionLost: 5
        case .busy: 6
        default: 1
        }
    }
}
