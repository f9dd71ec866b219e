// cast: the Cast command line sender. Arguments and output; the work is CastKit.
import CastCommandLine
import CastProtocol
import CastSecurity
import CastSender
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The width of the verb column in `cast --help`: the longest verb and two spaces, so that no verb runs into its text.
var verbColumn: Int { (verbs.map(\.name.count).max() ?? 0) + 2 }

let verbs: [Verb] = [
    Verb(
        name: "list", synopsis: "cast list [--json] [--timeout SEC]",
        abstract: "List the receivers and AirPlay speakers on the local network (mDNS).",
        options: [jsonOption, timeoutOption, helpOption], examples: ["cast list", "cast list --json --timeout 5"],
        run: list),
    Verb(
        name: "send",
        synopsis:
            "cast send SOURCE [--to RECEIVER]... [--start SEC] [--volume LEVEL] [--audio-lang LANG] [--sub-lang LANG|off] [--subtitles FILE] [--loop] [--user USER:PASS] [--json]",
        abstract:
            "Play a file (- for standard input, or an http(s) URL the receiver opens itself) on a receiver, or a file's audio on an AirPlay speaker, and follow it to the end.",
        options: [
            groupToOption,
            OptionSpec("start", value: "SEC", help: "start this many seconds into the media"),
            volumeOption,
            OptionSpec(
                "audio-lang", value: "LANG",
                help: "the audio track in this language (ISO 639: fra or fr), when there are several"),
            OptionSpec(
                "sub-lang", value: "LANG",
                help:
                    "the subtitles in this language (ISO 639), or off; default: the track the file marks forced or default"
            ),
            OptionSpec(
                "subtitles", value: "FILE",
                help: "show this subtitle file (SRT, ASS, WebVTT; at most 8 MB) instead of the film's own tracks"),
            OptionSpec("loop", help: "play it again each time it ends, until stopped"),
            OptionSpec(
                "user", value: "USER:PASS",
                help:
                    "HTTP credentials for a URL (or put them in it: http://USER:PASS@host/…); every local user sees them in the process list: prefer --user-file or CAST_USER"
            ),
            OptionSpec(
                "user-file", value: "FILE",
                help:
                    "read USER:PASS from the first line of FILE, which group and others must not be able to read (chmod 600)"
            ),
            noInteractiveOption, jsonOption, timeoutOption, helpOption,
        ],
        examples: [
            "cast send movie.mp4 --to \"Living Room\"", "cast send song.flac --to 192.168.1.20:7100 --json",
            "cast send intro.mp4 --to kitchen --loop --volume 0.3",
            "ffmpeg -i in.mkv -c copy -f mpegts - | cast send - --to kitchen",
            "cast send https://example.com/live/index.m3u8 --to kitchen --user alice:secret",
            "cast send song.mp3 --to \"Kitchen Speaker\" --volume 0.5",
            "cast send film.mkv --to \"Living Room\" --audio-lang fra",
            "cast send film.mkv --to \"Living Room\" --sub-lang eng",
            "cast send film.mkv --to \"Living Room\" --subtitles film.srt",
            "cast send album.flac --to kitchen --to \"Living Room\"",
        ], run: send),
    Verb(
        name: "queue",
        synopsis: "cast queue SOURCE... [--to RECEIVER]... [--shuffle] [--repeat one|all] [--volume LEVEL] [--json]",
        abstract:
            "Play files (or http(s) URLs) one after another on a receiver: a music queue. 'cast play' is the same verb.",
        options: [
            groupToOption,
            OptionSpec("shuffle", help: "play in a random order (a new one each round with --repeat all)"),
            OptionSpec(
                "repeat", value: "one|all", help: "repeat the current source, or the whole queue, until stopped"),
            volumeOption, noInteractiveOption, jsonOption, timeoutOption, helpOption,
        ],
        examples: [
            "cast queue *.flac --to kitchen", "cast play a.mp3 b.mp3 c.mp3 --to kitchen --shuffle --repeat all",
            "cast queue intro.wav --repeat one --json",
        ], run: queue),
    Verb(
        name: "join", synopsis: "cast join NAME --to RECEIVER [--json]",
        abstract:
            "Add a receiver to the group another receiver plays in; it joins in step (one playing alone becomes a group).",
        options: [toOption, jsonOption, timeoutOption, helpOption],
        examples: ["cast join study --to kitchen", "cast join \"Living Room\" --to kitchen --json"], run: join),
    Verb(
        name: "move", synopsis: "cast move NAME --to RECEIVER [--keep] [--json]",
        abstract: "Move what plays on a receiver to another, at the position it reached; the first one stops.",
        options: [
            toOption,
            OptionSpec(
                "keep", help: "the other receiver joins in step and the first one plays on (alone: a group of two)"),
            jsonOption, timeoutOption, helpOption,
        ],
        examples: ["cast move kitchen --to \"Living Room\"", "cast move kitchen --to study --keep"], run: move),
    Verb(
        name: "status", synopsis: "cast status [NAME] [--json]",
        abstract: "Show what a receiver is doing.",
        options: [jsonOption, timeoutOption, helpOption],
        examples: ["cast status \"Living Room\"", "cast status 10.0.0.5:7100 --json"], run: status),
    Verb(
        name: "pause", synopsis: "cast pause [NAME] [--json]", abstract: "Pause what plays on a receiver.",
        options: [jsonOption, timeoutOption, helpOption], examples: ["cast pause \"Living Room\"", "cast pause"],
        run: controlVerb(.pause)),
    Verb(
        name: "resume", synopsis: "cast resume [NAME] [--json]", abstract: "Resume what is paused on a receiver.",
        options: [jsonOption, timeoutOption, helpOption], examples: ["cast resume \"Living Room\""],
        run: controlVerb(.resume)),
    Verb(
        name: "stop", synopsis: "cast stop [NAME] [--json]",
        abstract: "Stop what plays on a receiver (its sender sees userExited).",
        options: [jsonOption, timeoutOption, helpOption], examples: ["cast stop \"Living Room\""],
        run: controlVerb(.stop)),
    Verb(
        name: "seek", synopsis: "cast seek [NAME] SEC|+SEC|-SEC [--keyframe] [--json]",
        abstract: "Move what plays to a time, absolute or relative; exact unless --keyframe.",
        options: [
            OptionSpec("keyframe", help: "land on the nearest preceding key frame (faster)"), jsonOption, timeoutOption,
            helpOption,
        ],
        examples: ["cast seek \"Living Room\" 90", "cast seek kitchen +10", "cast seek kitchen -10"], run: seek),
    Verb(
        name: "volume", synopsis: "cast volume [NAME] 0..1|up|down|mute|unmute [--json]",
        abstract: "Set a receiver's output volume (up and down: a step of 0.1), or mute it.",
        options: [jsonOption, timeoutOption, helpOption],
        examples: ["cast volume \"Living Room\" 0.4", "cast volume kitchen up", "cast volume kitchen mute"],
        run: volume),
    Verb(
        name: "next", synopsis: "cast next [NAME] [--json]",
        abstract: "Play the next source of the queue that plays on a receiver (cast queue, from any terminal).",
        options: [jsonOption, timeoutOption, helpOption], examples: ["cast next kitchen"], run: skipVerb(.next)),
    Verb(
        name: "previous", synopsis: "cast previous [NAME] [--json]",
        abstract:
            "Play the previous source of the queue on a receiver, or the current one again from its start when it has played more than 3 s.",
        options: [jsonOption, timeoutOption, helpOption], examples: ["cast previous kitchen"], run: skipVerb(.previous)),
    Verb(
        name: "subtitles", synopsis: "cast subtitles [NAME] LANG|off [--json]",
        abstract: "Show the subtitle track in a language (ISO 639: eng or en), or none, while a film plays.",
        options: [jsonOption, timeoutOption, helpOption],
        examples: ["cast subtitles \"Living Room\" fra", "cast subtitles kitchen off"], run: subtitles),
    Verb(
        name: "audio", synopsis: "cast audio [NAME] LANG [--json]",
        abstract: "Play the audio track in a language (ISO 639: fra or fr) while a film plays.",
        options: [jsonOption, timeoutOption, helpOption],
        examples: ["cast audio \"Living Room\" fra"], run: audio),
    Verb(
        name: "mirror",
        synopsis:
            "cast mirror [--to RECEIVER]... [--display :N] [--window ID] [--fps N] [--max-bitrate MBPS] [--audio PCM] [--audio-codec opus|pcm] [--encoder auto|software|vaapi] [--vaapi-device PATH] [--json]",
        abstract: "Show this X11 screen, or one window, on receivers, live, until q or Ctrl-C (or a take-over).",
        options: [
            OptionSpec(
                "to", value: "RECEIVER",
                help: "a receiver to show it on (name, id or HOST:PORT); again for several (not in step)"),
            OptionSpec("display", value: ":N", help: "the X11 display to show (default: $DISPLAY)"),
            OptionSpec(
                "window", value: "ID",
                help: "only this window (an X11 id, as xwininfo shows it); mirroring ends when it closes"),
            OptionSpec(
                "fps", value: "N", help: "pictures a second, 1 to 60 (default 30; an unchanged screen sends none)"),
            OptionSpec(
                "max-bitrate", value: "MBPS",
                help: "at most this many megabits a second (default 20; less when the link is slower)"),
            OptionSpec(
                "audio", value: "PCM", help: "also send the sound of this ALSA capture PCM (default, or a loopback)"),
            OptionSpec(
                "audio-codec", value: "CODEC",
                help: "the sound as opus (default: 128 kbit/s) or pcm (uncompressed, 1.5 Mbit/s: a fast LAN)"),
            OptionSpec(
                "encoder", value: "ENCODER",
                help:
                    "auto (default: the GPU's through VA-API when it opens, else libx264 with a note why), software "
                    + "(libx264) or vaapi (VA-API or exit 2)"),
            OptionSpec(
                "vaapi-device", value: "PATH",
                help: "the VA-API render node (default: the first /dev/dri/renderD*)"),
            jsonOption, timeoutOption, helpOption,
        ],
        examples: [
            "cast mirror --to \"Living Room\"", "cast mirror --to kitchen --display :1 --fps 60 --max-bitrate 8",
            "cast mirror --to kitchen --to bedroom --window 0x2a00007",
        ],
        run: mirror),
    Verb(
        name: "watch", synopsis: "cast watch [NAME] [--json]",
        abstract: "Follow everything that happens on a receiver until interrupted.",
        options: [jsonOption, timeoutOption, helpOption],
        examples: ["cast watch \"Living Room\"", "cast watch kitchen --json"],
        run: watch),
    Verb(
        name: "pair", synopsis: "cast pair [NAME] [--pin PIN] [--json]",
        abstract: "Pair with a receiver using the PIN it shows (or its password); later connections need no PIN.",
        options: [
            OptionSpec("pin", value: "PIN", help: "the PIN (or password) instead of a prompt"), jsonOption,
            timeoutOption,
            helpOption,
        ],
        examples: ["cast pair \"Living Room\"", "cast pair kitchen --pin 0427"], run: pair),
    Verb(
        name: "unpair", synopsis: "cast unpair NAME [--json]",
        abstract: "Forget a paired receiver (by name, id or alias).",
        options: [jsonOption, helpOption], examples: ["cast unpair \"Living Room\""], run: unpair),
    Verb(
        name: "config",
        synopsis: "cast config [default [NAME] | clear-default | alias ALIAS NAME | unalias ALIAS] [--json]",
        abstract: "Show or change the sender's settings: the default receiver and aliases for receivers.",
        options: [jsonOption, helpOption],
        examples: [
            "cast config", "cast config default \"Living Room\"", "cast config alias tv \"Living Room\"",
            "cast config unalias tv", "cast config clear-default --json",
        ], run: config),
]

/// Other names for verbs.
let verbAliases = ["play": "queue"]

/// `cast --help`: made only when asked for (a global `let` in main.swift is made at every start).
var toolUsage: String {
    """
    usage: cast VERB [options]

    Send media to Cast receivers and control them.

    verbs:
    \(verbs.map { "  " + padded($0.name, to: verbColumn) + $0.abstract }.joined(separator: "\n"))

    Run 'cast VERB --help' for a verb's options, 'man cast' for the whole manual.
    exit codes: 0 done, 1 playback error, 2 usage, 3 no such receiver, 4 not authorised, 5 connection lost,
    6 receiver busy
    """
}

func help(for verb: Verb) -> String {
    """
    usage: \(verb.synopsis)

    \(verb.abstract)\(verb.synopsis.contains("[NAME]") ? "\n" + receiverNote : "")

    options:
    \(OptionSpec.helpTable(verb.options))

    examples:
    \(verb.examples.map { "  " + $0 }.joined(separator: "\n"))
    """
}

@MainActor func main() -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    startOpenSSLWithoutExitCleanUp()
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments == ["--man"] {
        write(manualPage().roff, to: STDOUT_FILENO)
        return 0
    }
    guard let first = arguments.first, first != "--help", first != "help", first != "-h" else {
        output(toolUsage)
        return arguments.isEmpty ? 2 : 0
    }
    guard let verb = verbs.first(where: { $0.name == (verbAliases[first] ?? first) }) else {
        writeError(
            "cast: unknown verb '\(first)'\(suggestion(for: first, among: verbs.map(\.name) + verbAliases.keys)) (see cast --help)\n"
        )
        return 2
    }
    do {
        var parsed = try parseArguments(arguments.dropFirst(), options: verb.options)
        // --help wins: nothing the other options name (a credentials file) is read for it.
        if parsed.has("help") {
            output(help(for: verb))
            return 0
        }
        if verb.options.contains(where: { $0.name == "user" }) { parsed = try resolvingCredentials(parsed) }
        try verb.run(parsed)
        return 0
    } catch let error as UsageError {
        writeError("cast \(verb.name): \(error.message) (see cast \(verb.name) --help)\n")
        return 2
    } catch let error as CastError {
        writeError("cast \(verb.name): \(error.message)\n")
        return error.exitCode
    } catch {
        writeError("cast \(verb.name): \(error)\n")
        return 1
    }
}

exit(main())
