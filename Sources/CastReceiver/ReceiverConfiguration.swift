public import CastAirPlay
public import CastMedia
public import CastProtocol

/// Everything a receiver needs to run; `castd` builds it from flags and the config file.
public struct ReceiverConfiguration: Sendable {
    /// The friendly name, advertised as the DNS-SD instance name.
    public var name: String
    /// The TCP port; 0 picks a free one.
    public var port: UInt16
    /// The address to listen on (`::` takes IPv4 and IPv6).
    public var listenAddress: String
    /// How senders are admitted.
    public var auth: AuthMode
    /// The fixed secret for `auth == .password`.
    public var password: String?
    /// Where the identity (and later the pairing store) lives.
    public var stateDirectory: String
    /// Whether to advertise over mDNS.
    public var advertise: Bool
    /// What happens when a sender plays while another sender's session runs.
    public var takeover: TakeoverPolicy
    /// Where audio and video go.
    public var engine: PlayerConfiguration
    /// Whether each session's demux and decode run in a worker process (castd turns it on; library users of
    /// `Receiver` get `.off`, since their executable is not castd). See docs/security.md.
    public var decoderIsolation: DecoderIsolation = .off
    /// Files that decoder workers must not read, besides the state directory (castd's `--password-file`): each is
    /// an empty file in the workers' mount namespace (docs/decoder-worker.md, "The sandbox"). At most 3.
    public var decoderHiddenFiles: [String] = []
    /// Where `--events` writes, if anywhere.
    public var events: EventLog?
    /// Limits that protect the receiver from slow or hostile peers.
    public var limits: Limits
    /// The port of the AirPlay video service (`--airplay-video`, `--airplay-port`; 0 picks a free one);
    /// nil (the default) leaves it off. It admits anyone on the network: see docs/security.md.
    public var airPlayVideoPort: UInt16?

    /// Bounds on what one connection may cost.
    public struct Limits: Sendable {
        /// Time for the TLS handshake.
        public var handshakeTimeout: Duration = .seconds(5)
        /// Time from the end of the handshake to a complete hello.
        public var helloTimeout: Duration = .seconds(5)
        /// Time a peer may take between the first and the last byte of one frame.
        public var frameTimeout: Duration = .seconds(5)
        /// Admitted connections (paired senders' control and media connections) at once; one more is closed when
        /// it would be admitted.
        public var maximumConnections: Int = 64
        /// Connections not yet admitted (in the TLS handshake, before hello, pairing), at once. They cost a thread
        /// waiting in poll(2) and a socket each. When all are taken, a newcomer takes the place of the oldest, which
        /// is closed (see `ConnectionAdmission`): strangers cannot crowd out paired senders.
        public var maximumUnadmittedConnections: Int = 256
        /// Connections not yet admitted from one source address; more from it are refused at accept.
        public var maximumUnadmittedPerSource: Int = 32
        /// Silence after which a playing sender counts as vanished (its session ends, the receiver
        /// is free). Senders send something at least every few seconds while playing.
        public var senderTimeout: Duration = .seconds(10)
        /// Time a sender may take to type the PIN and send its proof (the limiter's attempt timeout, which ends
        /// an attempt whose connection is stuck, is the same).
        public var pairingTimeout: Duration = PairingAttemptLimiter.attemptTimeout
        /// Pairing attempts that may fail in a row (wrong, abandoned or timed out) before pairing is closed until
        /// the operator reopens it (SIGHUP; the count survives a restart): `--pairing-attempts`, 1 to 10.
        public var pairingAttemptLimit: Int = PairingAttemptLimiter.defaultAttemptLimit
        /// Time from an accepted play request to its media connection.
        public var mediaConnectionTimeout: Duration = .seconds(10)
        /// AirPlay connections served at once; more are closed at accept.
        public var maximumAirPlayConnections: Int = 16
        /// AirPlay connections served at once from one address, so that one device cannot take every place.
        public var maximumAirPlayConnectionsPerAddress: Int = 8
        /// Time an AirPlay client may take from the first to the last byte of one request: 10 s, and a second more
        /// for every 128 KiB of a body (a picture) that arrived.
        public var airPlayRequestTimeout = RequestTimeout()
        /// Silence after which an AirPlay connection is closed, unless a session it started still runs
        /// (then TCP keepalive finds a vanished client).
        public var airPlayIdleTimeout: Duration = .seconds(60)
        /// Creates the defaults.
        public init() {}
    }

    /// Creates a configuration.
    public init(
        name: String, port: UInt16 = 7100, listenAddress: String = "::", auth: AuthMode = .pin,
        password: String? = nil, stateDirectory: String, takeover: TakeoverPolicy = .allow, advertise: Bool = true,
        engine: PlayerConfiguration = PlayerConfiguration(audio: .alsa(device: "default"), video: .none),
        events: EventLog? = nil, limits: Limits = Limits(), airPlayVideoPort: UInt16? = nil
    ) {
        self.airPlayVideoPort = airPlayVideoPort
        self.engine = engine
        self.events = events
        self.name = name
        self.port = port
        self.listenAddress = listenAddress
        self.auth = auth
        self.password = password
        self.takeover = takeover
        self.stateDirectory = stateDirectory
        self.advertise = advertise
        self.limits = limits
    }
}

/// What a receiver does when a second sender plays while a session runs.
public enum TakeoverPolicy: String, Sendable, CaseIterable {
    /// The newcomer takes over; the first sender is told it was interrupted (the default, as Chromecast).
    case allow
    /// The newcomer is told the receiver is busy.
    case deny
}
