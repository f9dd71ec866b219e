// cast pair and cast unpair.
import CastBase
import CastCommandLine
import CastProtocol
import CastSender
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func pair(_ arguments: ParsedArguments) throws(CastError) {
    let receiver = try resolveReceiver(receiverAndValues(arguments, verb: "pair").receiver, arguments)
    let given = arguments.options["pin"]
    let paired = try Pairing.pair(receiver, configDirectory: senderConfigDirectory(), senderName: senderName()) {
        if let given { return given }
        let what = receiver.record?.auth == .password ? "the password of" : "the PIN shown on"
        writeError("Enter \(what) \(printable(receiver.name)): ")
        return readLine(strippingNewline: true)?.trimmed()
    }
    output(
        arguments.has("json")
            ? json(["name": paired.name, "id": paired.id, "paired": true])
            : "paired with \(printable(paired.name)) (id \(paired.id))")
}

func unpair(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1 else { throw CastError(.usage, "cast unpair needs one receiver NAME or id") }
    let name = try settings().resolve(arguments.positionals[0]) ?? arguments.positionals[0]
    let removed = try Pairing.unpair(name, configDirectory: senderConfigDirectory())
    output(arguments.has("json") ? json(["forgot": removed, "paired": false]) : "forgot \(printable(removed))")
}
