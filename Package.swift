// swift-tools-version:6.0
import PackageDescription

/// Swift settings shared by every Swift target: Swift 6 language mode is the package default;
/// upcoming features that make the concurrency story stricter are enabled on top.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Cast",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "castd", targets: ["castd"]),
        .executable(name: "cast", targets: ["cast"]),
        .library(name: "CastKit", targets: ["CastKit"]),
    ],
    targets: [
        // MARK: C libraries (module map + shim header; no logic but CAvahi's loader)
        // avahi-client is opened with dlopen on first use (shim.h), not linked, so that a `cast` that never browses
        // maps no avahi, D-Bus or systemd library: headers only (/usr/include, libavahi-client-dev from scripts/setup).
        .systemLibrary(name: "CAvahi"),
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [
                .apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev", "libswscale-dev"])
            ]),
        // libass: text subtitles (ASS/SSA, and SRT, mov_text, WebVTT as FFmpeg's decoders turn them into ASS).
        .systemLibrary(
            name: "CASS", pkgConfig: "libass",
            providers: [.apt(["libass-dev"])]),
        .systemLibrary(
            name: "CALSA", pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        // `cast mirror`'s screen capture (cast-mirror): Xlib, MIT-SHM, XDamage, XFixes.
        .systemLibrary(
            name: "CX11", pkgConfig: "x11",
            providers: [.apt(["libx11-dev", "libxext-dev", "libxdamage-dev", "libxfixes-dev"])]),
        // The decoder worker's sandbox: seccomp-bpf, namespaces, mounts, capabilities (kernel headers, no library).
        .systemLibrary(name: "CSandbox"),
        // The C library's GNU calls that Swift's Glibc module does not declare (accept4), for CastSystem.
        .systemLibrary(name: "CSystem"),
        // No pkgConfig: sdl2.pc's cflags carry -D_REENTRANT, which SwiftPM refuses with a warning on every build; the
        // shim includes <SDL2/SDL.h> by its full path and the module map links SDL2 and SDL2_ttf.
        .systemLibrary(name: "CSDL2", providers: [.apt(["libsdl2-dev", "libsdl2-ttf-dev"])]),

        // MARK: Pure Swift
        // The layers (docs/architecture.md): CastBase ← CastProtocol ← CastSystem ← CastSecurity ← the services.
        // CastBase: what has no wire format and names nothing of Cast's (threads, monitors, clocks and clock maths,
        // text, rate limits): it would read the same in another program.
        .target(name: "CastBase", swiftSettings: strict),
        // CastProtocol: what is on the wire or decides what may come over it: frames, one file per message, pairing
        // messages and rules, events and their reducer, the receiver's connection machine. Value in, value out.
        .target(name: "CastProtocol", dependencies: ["CastBase"], swiftSettings: strict),
        .target(name: "CastCommandLine", swiftSettings: strict),
        // AirPlay 1 speakers (RAOP): RTSP, SDP, the RTP/sync/timing packets and the session state machine.
        .target(name: "CastRAOP", swiftSettings: strict),
        // AirPlay 1 video as castd answers it: HTTP requests, routes, property lists. No sockets.
        .target(name: "CastAirPlay", dependencies: ["CastBase", "CastProtocol"], swiftSettings: strict),

        // MARK: The operating system
        // CastSystem: system calls, private files, processes, TCP, frames over a socket, the checked proxy. No C
        // library but the C library itself, so that a program that only moves frames (cast-decode) links no OpenSSL.
        .target(name: "CastSystem", dependencies: ["CSystem", "CastBase", "CastProtocol"], swiftSettings: strict),

        // MARK: Wrappers around one C library each
        // CastSecurity: keys, TLS, SRP and the trust stores (OpenSSL), on CastSystem's sockets and files.
        .target(
            name: "CastSecurity", dependencies: ["COpenSSL", "CastProtocol", "CastSystem"],
            swiftSettings: strict),
        .target(name: "CastDiscovery", dependencies: ["CAvahi", "CastBase", "CastProtocol"], swiftSettings: strict),
        .target(
            name: "CastMedia", dependencies: ["CFFmpeg", "CASS", "CALSA", "CSDL2", "CastBase", "CastProtocol"],
            swiftSettings: strict),

        // `cast mirror`'s capture (X11) and encoder (libx264 through libavcodec), used by the cast-mirror helper.
        .target(
            name: "CastMirror", dependencies: ["CX11", "CFFmpeg", "CALSA", "CastProtocol"], swiftSettings: strict),

        // MARK: Services and the library
        .target(
            name: "CastReceiver",
            dependencies: [
                "CastBase", "CastProtocol", "CastAirPlay", "CastSystem", "CastSecurity", "CastDiscovery", "CastMedia",
                "CSandbox", "CastCommandLine",
            ],
            swiftSettings: strict),
        // The sender's core: discovery, pairing, the connection, remote playback, groups, AirPlay speakers. No
        // FFmpeg, SDL or ALSA, so that `cast` starts fast (a speaker's audio is decoded by `cast-decode`).
        .target(
            name: "CastSender",
            dependencies: ["CastBase", "CastProtocol", "CastSystem", "CastSecurity", "CastDiscovery", "CastRAOP"],
            swiftSettings: strict),
        // The library for programs: the core, and the players, which play locally with the engine.
        .target(
            name: "CastKit",
            dependencies: ["CastBase", "CastSender", "CastProtocol", "CastSecurity", "CastMedia", "CastRAOP"],
            swiftSettings: strict),

        // MARK: Executables (thin)
        .executableTarget(
            name: "castd", dependencies: ["CastReceiver", "CastCommandLine", "CastMedia", "CastBase", "CastSystem"],
            path: "Receiver",
            exclude: ["castd.service"], swiftSettings: strict),
        .executableTarget(
            name: "cast",
            dependencies: ["CastSender", "CastBase", "CastProtocol", "CastSystem", "CastSecurity", "CastCommandLine"],
            path: "Sender",
            swiftSettings: strict),
        // `cast`'s speaker decoder (a helper process: FFmpeg stays out of `cast`). Frames over its socket come from
        // CastSystem, so it links no OpenSSL (ProductTests).
        .executableTarget(
            name: "cast-decode", dependencies: ["CastMedia", "CastProtocol", "CastSystem"], path: "SenderDecoder",
            swiftSettings: strict),

        // `cast mirror`'s capture and encoder (a helper process: X11 and FFmpeg stay out of `cast`).
        .executableTarget(
            name: "cast-mirror", dependencies: ["CastMirror", "CastBase", "CastProtocol"], path: "MirrorSender",
            swiftSettings: strict),

        // MARK: Examples (built with everything else, so CI keeps them compiling)
        .executableTarget(
            name: "movie-player", dependencies: ["CastKit"], path: "Examples/MoviePlayer", swiftSettings: strict),
        .executableTarget(
            name: "music-queue", dependencies: ["CastKit"], path: "Examples/MusicQueue", swiftSettings: strict),
        .executableTarget(
            name: "queue-append", dependencies: ["CastKit"], path: "Examples/QueueAppend", swiftSettings: strict),

        // MARK: Tests
        .testTarget(name: "CastBaseTests", dependencies: ["CastBase"], swiftSettings: strict),
        .testTarget(
            name: "CastProtocolTests", dependencies: ["CastProtocol", "CastTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "CastSystemTests", dependencies: ["CastSystem", "CastTestSupport"],
            swiftSettings: strict),
        .testTarget(name: "CastRAOPTests", dependencies: ["CastRAOP"], swiftSettings: strict),
        .testTarget(name: "CastAirPlayTests", dependencies: ["CastAirPlay"], swiftSettings: strict),
        .testTarget(name: "CastCommandLineTests", dependencies: ["CastCommandLine"], swiftSettings: strict),
        .testTarget(
            name: "CastSenderTests", dependencies: ["CastSender", "CastProtocol", "CastSecurity"], swiftSettings: strict
        ),
        .testTarget(
            name: "CastKitTests", dependencies: ["CastKit", "CastBase", "CastSender", "CastTestSupport"],
            swiftSettings: strict),
        // Imports CastKit alone: what a program using the library sees.
        .testTarget(name: "CastKitImportTests", dependencies: ["CastKit"], swiftSettings: strict),
        .testTarget(
            name: "CastReceiverTests", dependencies: ["CastReceiver", "CastSystem", "CastTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "CastSecurityTests", dependencies: ["CastSecurity", "CastSystem", "CastTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "CastDiscoveryTests", dependencies: ["CastDiscovery", "CastTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "CastMediaTests", dependencies: ["CastMedia", "CastBase", "CastProtocol", "CastTestSupport"],
            swiftSettings: strict),
        .testTarget(name: "CastMirrorTests", dependencies: ["CastMirror", "CastProtocol"], swiftSettings: strict),
        // The tests' own helpers, one copy each (not a product): waiting, background work, event logs, the captures of
        // castd's sound, Xvfb.
        .target(
            name: "CastTestSupport", dependencies: ["CastBase", "CastProtocol"], path: "Tests/CastTestSupport",
            swiftSettings: strict),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["CastBase", "CastProtocol", "CastSystem", "CastSecurity", "CastTestSupport"],
            swiftSettings: strict),
    ]
)
