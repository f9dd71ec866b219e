// Output and environment of cast: printing, JSON, where the sender keeps its identity.
import CastCommandLine
import CastSender
import CastProtocol
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func output(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func browseTimeout(_ arguments: ParsedArguments) throws(CastError) -> Duration {
    guard let text = arguments.options["timeout"] else { return .seconds(2) }
    guard let seconds = Double(text), seconds > 0, seconds <= 60 else {
        throw CastError(.usage, "--timeout must be a number of seconds from 0 to 60")
    }
    return .milliseconds(Int(seconds * 1000))
}

func senderConfigDirectory() -> String {
    let env = ProcessInfo.processInfo.environment
    return (env["XDG_CONFIG_HOME"] ?? ((env["HOME"] ?? "/tmp") + "/.config")) + "/cast"
}

func senderName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    let host = gethostname(&buffer, buffer.count) == 0
        ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
    return "\(ProcessInfo.processInfo.environment["USER"] ?? "user")@\(host)"
}

func json(_ object: Any) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    return String(decoding: data, as: UTF8.self)
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
