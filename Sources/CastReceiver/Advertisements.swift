import CastAirPlay
import CastDiscovery
import Synchronization

/// castd's mDNS advertisements: the Cast service (`_cast._tcp`, always with `advertise`) and the AirPlay video
/// service (`_airplay._tcp`, with `--airplay-video`), each under the friendly name, re-published when the name
/// changes (SIGHUP) and withdrawn first at `stop` (no sender finds a receiver that no longer answers).
///
/// Thread-safety: `Sendable`; which advertisements run, their ports and whether `stop` was called live in a `Mutex`;
/// the advertisers are started and stopped outside it (avahi's calls may block).
final class Advertisements: Sendable {
    /// Which of castd's services an advertisement is for.
    enum Service: Sendable, Equatable {
        /// The Cast service, whose TXT record is the `ServiceRecord`.
        case cast
        /// The AirPlay video service, whose TXT record is the `AirPlayDevice`'s.
        case airPlay
    }

    private struct Running {
        var advertiser: Advertiser
        var port: UInt16
        var txt: [String: String]
    }

    private struct State {
        var running: [Service: Running] = [:]
        var stopped = false
    }

    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// The services advertised now, each with its port.
    var services: [Service: UInt16] { state.withLock { $0.running.mapValues(\.port) } }

    /// Advertises `service` on `port` under `name` (in place of an advertisement of it that runs). Nothing after
    /// `stop`.
    func advertise(_ service: Service, name: String, port: UInt16, txt: [String: String]) {
        let serviceType = service == .cast ? ServiceAdvertisement.castServiceType : AirPlayDevice.serviceType
        let logger = self.logger
        let advertiser = Advertiser(ServiceAdvertisement(name: name, port: port, txt: txt, serviceType: serviceType)) {
            let (level, line) = Self.logLine(for: $0, of: service, port: port)
            logger.log(level, line)
        }
        let (taken, replaced) = state.withLock { state -> (Bool, Advertiser?) in
            guard !state.stopped else { return (false, nil) }
            defer { state.running[service] = Running(advertiser: advertiser, port: port, txt: txt) }
            return (true, state.running[service]?.advertiser)
        }
        guard taken else { return }
        replaced?.stop()
        advertiser.start()
    }

    /// Publishes every running advertisement again under `name`; the Cast service's TXT record is `castTXT` (it
    /// carries the name).
    func rename(to name: String, castTXT: [String: String]) {
        let running = state.withLock { $0.running }
        for service in [Service.cast, .airPlay] {
            guard let ad = running[service] else { continue }
            advertise(service, name: name, port: ad.port, txt: service == .cast ? castTXT : ad.txt)
        }
    }

    /// Withdraws every advertisement; later calls to `advertise` do nothing. Idempotent.
    func stop() {
        let running = state.withLock { state in
            state.stopped = true
            defer { state.running = [:] }
            return state.running
        }
        for ad in running.values { ad.advertiser.stop() }
    }

    /// What castd's log says when an advertisement of `service` on `port` reports `event`.
    static func logLine(for event: AdvertiserEvent, of service: Service, port: UInt16) -> (Logger.Level, String) {
        switch (service, event) {
        case (.cast, .published(let name)):
            (.info, "advertised as \"\(name)\" (\(ServiceAdvertisement.castServiceType)) on mDNS")
        case (.cast, .renamed(let from, let to)):
            (.warning, "the name \"\(from)\" is taken on this network; advertised as \"\(to)\" instead")
        case (.cast, .daemonUnavailable(let reason)):
            (.warning, "not advertised: \(reason); senders can still connect with --to HOST:\(port)")
        case (.cast, .failed(let reason)):
            (.error, "advertising failed: \(reason); senders can still connect with --to HOST:\(port)")
        case (.airPlay, .published(let name)):
            (.info, "advertised as \"\(name)\" (\(AirPlayDevice.serviceType)) on mDNS")
        case (.airPlay, .renamed(let from, let to)):
            (.warning, "the AirPlay name \"\(from)\" is taken on this network; advertised as \"\(to)\" instead")
        case (.airPlay, .daemonUnavailable(let reason)):
            (.warning, "AirPlay video not advertised: \(reason)")
        case (.airPlay, .failed(let reason)):
            (.error, "advertising AirPlay video failed: \(reason)")
        }
    }
}
