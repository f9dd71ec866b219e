// cast --man: the manual page, made from the verb table that --help prints.
import CastCommandLine
import CastProtocol
import CastSender

@MainActor func manualPage() -> ManualPage {
    ManualPage(
        name: "cast", section: 1, summary: "send media to Cast receivers and control them",
        synopsis: ["cast VERB [options]", "cast VERB --help"],
        sections: [
            .init(
                "DESCRIPTION",
                paragraphs: [
                    "cast finds Cast receivers (castd) on the local network over mDNS, pairs with them, plays files, standard input and http(s) URLs on them, and controls and follows what they play. Every connection is TLS 1.3 with both keys pinned once paired.",
                    receiverNote,
                    "On a terminal, send and queue show a status line (state, position / duration, progress, volume, buffering) and take keys: space pauses and resumes, left and right arrows seek 10 s, up and down arrows change the volume by 0.1 (on every member of a group), n or > plays the next source of a queue and p or < the previous one (or the current one again from its start when it has played more than 3 s), q stops; other keys are ignored. cast next and cast previous do the same from another terminal. With --json they print the receiver's events as JSON lines instead.",
                ]),
            .init(
                "VERBS",
                subsections: verbs.map { verb in
                    .init(
                        verb.synopsis.replacingPrefix("cast ", with: ""), paragraphs: [verb.abstract],
                        options: verb.options, examples: verb.examples)
                }),
            .init(
                "EXIT STATUS",
                terms: [
                    ("0", "played to the end, stopped by the user, or done"), ("1", "playback failed on the receiver"),
                    ("2", "the command line was wrong"),
                    ("3", "no such receiver, or no mDNS (avahi-daemon not running)"),
                    ("4", "not authorised: pairing is needed or was refused"),
                    ("5", "the connection to the receiver was lost, or the receiver shut down"),
                    ("6", "the receiver plays for another sender and does not allow a take-over"),
                ]),
            .init(
                "FILES",
                terms: [
                    (
                        "$XDG_CONFIG_HOME/cast/identity.pem",
                        "the sender's Ed25519 key, mode 0600 (XDG_CONFIG_HOME defaults to ~/.config)"
                    ),
                    (
                        "$XDG_CONFIG_HOME/cast/known-receivers.json",
                        "the receivers this sender paired with, and their keys"
                    ),
                    ("$XDG_CONFIG_HOME/cast/settings.json", "the default receiver and aliases (cast config)"),
                ]),
            .init(
                "ENVIRONMENT",
                terms: [
                    (
                        "CAST_USER",
                        "USER:PASS, the HTTP credentials for an http(s) URL that cast send plays when neither --user nor --user-file is given; unlike --user, not shown in the process list"
                    ),
                    ("XDG_CONFIG_HOME", "where the cast directory lives (default ~/.config)"),
                ]),
            .init("SEE ALSO", paragraphs: ["castd(8), avahi-browse(1)"]),
        ],
        version: castVersion)
}

extension String {
    fileprivate func replacingPrefix(_ prefix: String, with replacement: String) -> String {
        hasPrefix(prefix) ? replacement + dropFirst(prefix.count) : self
    }
}
