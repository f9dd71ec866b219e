// castd's commands that print and exit (--list-audio-devices, --list-paired, --unpair), the password file, and the
// process's own set-up.
import CastBase
import CastMedia
import CastProtocol
import CastReceiver
import CastSecurity
import CastSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("castd: \(message)\n".utf8))
    exit(code)
}

// Each session runs the engine on new threads, and glibc gives threads their own malloc arenas (up to 8 per core),
// each keeping the high-water mark of what it once held; and it raises its mmap threshold to the largest block
// freed, so decoded frames end up in those arenas. A receiver that plays one file after another (and hostile ones:
// docs/faults.md) then grows by megabytes per session. Two arenas and a fixed threshold (frames and packet buffers
// are mapped and unmapped) keep its memory flat; the cost is a little lock contention between threads.
// (malloc.h is not part of Swift's Glibc module: mallopt is looked up, with its option numbers from malloc.h.)
func limitMallocArenas() {
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        let arenaMaximum: Int32 = -8  // M_ARENA_MAX
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        _ = mallopt(arenaMaximum, 2)
        _ = mallopt(mmapThreshold, 128 * 1024)
    }
}

/// `--list-audio-devices`: the ALSA PCMs, each with its description indented below it.
func listAudioDevices() {
    let devices = AudioDevices.list()
    if devices.isEmpty { print("no ALSA PCMs found") }
    for device in devices {
        let lines = device.description.split(separator: "\n")
        print(device.name + (lines.isEmpty ? "" : "\n" + lines.map { "    " + $0 }.joined(separator: "\n")))
    }
}

/// `--list-paired` and `--unpair ID`: the pairing store in the state directory.
func pairedSenders(_ settings: ReceiverSettings) throws {
    let store = try PairedSenders.load(directory: settings.configuration.stateDirectory)
    if case .unpair(let id) = settings.command {
        switch try store.remove(id) {
        case .removed(let sender): print("unpaired \(printable(sender.name)) (id \(sender.id))")
        case .notFound: fail("no paired sender with id \(id)", code: 1)
        case .ambiguous(let matches):
            fail("\(id) matches several senders: \(matches.map(\.id).joined(separator: ", "))", code: 1)
        }
        return
    }
    let senders = try store.list()
    if senders.isEmpty { print("no paired senders") }
    let formatter = ISO8601DateFormatter()
    for sender in senders {
        print("\(sender.id)  \(formatter.string(from: sender.pairedAt))  \(printable(sender.name))")
    }
}

/// The secret of `--auth password`: at most 4 KiB, the trailing newline dropped, not empty.
func readPassword(_ file: String) throws(ReceiverSettings.Problem) -> String {
    let data: [UInt8]
    do {
        data = try SecretFile.read(file, limit: 4096)
    } catch {
        throw ReceiverSettings.Problem("cannot read the password file: \(error)")
    }
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    guard !text.isEmpty else { throw ReceiverSettings.Problem("the password file \(file) is empty") }
    return text
}
