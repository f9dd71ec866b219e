// A verb of `cast` and the options several verbs share (the verb table is in main.swift).
import CastCommandLine
import CastSender

/// One verb of `cast`.
struct Verb {
    let name: String
    let synopsis: String
    let abstract: String
    let options: [OptionSpec]
    let examples: [String]
    let run: (ParsedArguments) throws(CastError) -> Void
}

let jsonOption = OptionSpec("json", help: "print JSON instead of text (events as JSON lines)")
let timeoutOption = OptionSpec("timeout", value: "SEC", help: "how long to look for receivers (default 2)")
let helpOption = OptionSpec("help", help: "show this help")

let toOption = OptionSpec("to", value: "RECEIVER", help: "receiver name, id, unique prefix, alias or HOST:PORT")
/// `--to` of the verbs that play: given again, a group playing in step (docs/multiroom.md).
let groupToOption = OptionSpec(
    "to", value: "RECEIVER",
    help: "receiver name, id, unique prefix, alias or HOST:PORT; several --to: a group, in step")
let volumeOption = OptionSpec("volume", value: "LEVEL", help: "set the receiver's volume (0 to 1) as playback starts")
let noInteractiveOption = OptionSpec(
    "no-interactive",
    help: "take no keys (on a terminal: space pause, ←/→ seek 10 s, ↑/↓ volume, n or > next, p or < previous, q stop)")

/// What `[NAME]` means, in every verb's help.
let receiverNote =
    "NAME is a receiver's name, id, unique prefix, an alias (cast config), or HOST:PORT; without it, the default receiver (cast config default), else the only one in sight."
