// cast config: the default receiver and aliases.
import CastCommandLine
import CastSender
import FoundationEssentials

/// `cast config`                        show the settings
/// `cast config default [NAME]`          show or set the receiver used when a verb is given none
/// `cast config clear-default`           forget it
/// `cast config alias ALIAS NAME`        make ALIAS stand for a receiver
/// `cast config unalias ALIAS`           forget an alias
func config(_ arguments: ParsedArguments) throws(CastError) {
    let settings = try settings()
    let words = arguments.positionals
    switch (words.first, words.count) {
    case (nil, _):
        break
    case ("default", 1):
        break
    case ("default", 2):
        try settings.setDefaultReceiver(words[1])
    case ("clear-default", 1):
        try settings.setDefaultReceiver(nil)
    case ("alias", 3):
        try settings.setAlias(words[1], to: words[2])
    case ("unalias", 2):
        guard try settings.removeAlias(words[1]) else { throw CastError(.usage, "there is no alias '\(words[1])'") }
    case (let word?, _):
        let known = ["default", "clear-default", "alias", "unalias"]
        guard known.contains(word) else {
            throw CastError(.usage, "unknown setting '\(word)'\(suggestion(for: word, among: known))")
        }
        throw CastError(.usage, "wrong number of words for 'cast config \(word)'")
    }
    let current = try settings.defaultReceiver()
    let aliases = try settings.aliases()
    if arguments.has("json") {
        var object: [String: Any] = ["aliases": aliases]
        if let current { object["default"] = current }
        output(json(object))
        return
    }
    if words.first == "default" && words.count == 1 {
        // Only the value, for scripts: `cast config default` prints the name (nothing when none is set).
        if let current { output(current) }
        return
    }
    output("default: \(current ?? "(none: the only receiver in sight)")")
    for (alias, target) in aliases.sorted(by: { $0.key < $1.key }) {
        output("alias \(alias) = \(target)")
    }
}
