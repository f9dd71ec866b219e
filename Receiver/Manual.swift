// castd --man: the manual page, made from the options that --help prints.
import CastCommandLine
import CastProtocol
import CastReceiver

func manualPage() -> ManualPage {
    ManualPage(
        name: "castd", section: 8, summary: "the Cast receiver daemon",
        synopsis: ["castd [options]"],
        sections: [
            .init(
                "DESCRIPTION",
                paragraphs: [
                    "castd advertises itself over mDNS (avahi) as _castd._tcp, admits only paired senders over TLS 1.3, decodes what they send with FFmpeg, plays audio through ALSA and video in a window or full screen, and pushes every change of playback state back to the sender.",
                    "With --auth pin (the default) it prints a line \"Pairing PIN: NNNN\" with a fresh PIN for each pairing attempt; cast pair asks for it. Every attempt that does not pair (a wrong PIN, a sender that leaves or takes longer than 60 seconds) makes the next one wait longer (1, 2, 4, ... 60 seconds); after --pairing-attempts (10) of them in a row pairing is closed until castd gets SIGHUP (a restart does not reopen it: the count is kept in the state directory), so that a guesser's chance stays at 0.1 %. Paired senders are not affected.",
                    "Every option can also be set in the config file as a line \"key = value\", the key being the option's name without dashes (name = Kitchen); # starts a comment. A switch takes yes or no (airplay-video = yes). Options on the command line win.",
                    "With --airplay-video it also answers AirPlay 1 video clients (an iPhone's or pyatv's \"play this URL\") on --airplay-port (7000), advertised as _airplay._tcp. AirPlay video has no pairing: anyone on the network can then make the receiver play an http(s) URL, and pause, seek or stop it. It is off by default.",
                    "Audio is paced by the sound card or by castd's clock (--audio-clock). auto (the default) decides by the PCM: one whose chain of plugins ends in ALSA's null PCM (null, or the file plugin over it) takes audio as fast as it is given and castd paces it; any other (a card, a plugin over one, a sound server) paces itself, and castd writes up to its buffer ahead and follows it. In a group, a card that paces itself is kept on the group's timeline by resampling its audio by up to 0.1 % (its crystal's drift), never by dropping or repeating samples.",
                    "Each session's demux and decode run in a worker process (castd re-executes itself) with resource limits, in a sandbox (a system call filter, no capabilities, and a mount namespace of its own in which the state directory is empty: keep the ALSA configuration, the framemd5 and timing files out of it): a crash or an exhausted limit there ends that session with a playbackError saying the decoder died, and castd goes on. With --video-out window or fullscreen the worker shows the video in a window of its own, and castd's idle screen steps aside until the session ends. --decoder-isolation off decodes every session inside castd (debugging).",
                ],
                options: ReceiverSettings.options),
            .init(
                "EXAMPLES",
                examples: [
                    "castd --name \"Living Room\"",
                    "castd --auth none --port 0 --video-out none --state-dir /tmp/castd",
                    "castd --list-paired", "castd --name \"Living Room\" --airplay-video",
                ]),
            .init(
                "SIGNALS",
                terms: [
                    (
                        "SIGHUP",
                        "re-read the config file (a new name is advertised at once, other changes take effect after a restart), and reopen pairing if failed attempts closed it"
                    ),
                    (
                        "SIGTERM, SIGINT",
                        "stop playback, tell the sender that the receiver is shutting down (it may retry), and exit 0"
                    ),
                ]),
            .init(
                "FILES",
                terms: [
                    ("/etc/castd.conf", "the config file (or --config FILE)"),
                    (
                        "/var/lib/castd/identity.pem",
                        "the receiver's Ed25519 key, mode 0600 (the state directory is --state-dir)"
                    ),
                    ("/var/lib/castd/paired-senders.json", "the senders paired with this receiver, and their keys"),
                ]),
            .init(
                "EXIT STATUS",
                terms: [
                    ("0", "stopped by a signal, or a listing done"), ("1", "could not start: the message says why"),
                    ("2", "the command line or the config file was wrong"),
                ]),
            .init("SEE ALSO", paragraphs: ["cast(1), avahi-daemon(8), systemd.service(5)"]),
        ],
        version: castVersion)
}
