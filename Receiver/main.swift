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

startOpenSSLWithoutExitCleanUp()

// A decoder worker (castd re-executed by itself for one session, docs/decoder-worker.md) does nothing else. The mode
// is not in --help, and refuses to run unless castd started it.
if SessionWorker.isRequested(CommandLine.arguments) {
    limitMallocArenas()
    SessionWorker.run(arguments: CommandLine.arguments)
}

let arguments = Array(CommandLine.arguments.dropFirst())
let settings: ReceiverSettings
do throws(ReceiverSettings.Problem) {
    settings = try ReceiverSettings.parse(arguments)
} catch {
    fail(error.message, code: 2)
}

switch settings.command {
case .run: break
case .help:
    print(ReceiverSettings.usage)
    exit(0)
case .manual:
    print(manualPage().roff, terminator: "")
    exit(0)
case .listAudioDevices:
    listAudioDevices()
    exit(0)
case .listPaired, .unpair:
    do {
        try pairedSenders(settings)
    } catch {
        fail("\(error)", code: 1)
    }
    exit(0)
}

var configuration = settings.configuration
if let path = settings.eventsPath {
    do { configuration.events = try EventLog(path: path) } catch { fail("\(error)", code: 2) }
}
if let file = settings.passwordFile {
    do {
        configuration.password = try readPassword(file)
    } catch {
        fail(error.message, code: 2)
    }
}

signal(SIGPIPE, SIG_IGN)
limitMallocArenas()
let logger = Logger.standardError()
logger.takeFFmpegLines()
let receiver: Receiver
do {
    receiver = try Receiver(configuration: configuration, logger: logger)
    try receiver.start()
} catch {
    fail("\(error)", code: 1)
}
switch configuration.decoderIsolation {
case .off: logger.info("decoder isolation off: sessions decode inside castd")
case .on(let limits):
    logger.info(
        "decoder isolation on: each session decodes in a worker process (address space \(limits.addressSpace >> 20) MiB)"
    )
}
switch configuration.auth {
case .none:
    logger.warning("auth none: any sender on this network can control this receiver")
case .pin:
    logger.info(
        "paired senders only; pair with: cast pair \"\(configuration.name)\" (a PIN is shown here for each attempt)")
case .password:
    logger.info("paired senders only; pair with: cast pair \"\(configuration.name)\" and the password")
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
    let reloaded: ReceiverSettings
    do throws(ReceiverSettings.Problem) {
        reloaded = try ReceiverSettings.parse(arguments)
    } catch {
        logger.error("SIGHUP: \(error.message); keeping the running configuration")
        return
    }
    let change = reloaded.reload(over: settings)
    logger.info("SIGHUP: configuration reloaded")
    receiver.rename(to: change.name)
    receiver.setScalingMode(change.scaling)
    if !change.needRestart.isEmpty {
        logger.warning("SIGHUP: \(change.needRestart.joined(separator: ", ")) take effect after a restart")
    }
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
