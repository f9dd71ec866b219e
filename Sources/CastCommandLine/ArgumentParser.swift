/// One option a command accepts.
public struct OptionSpec: Sendable {
    /// The long name without dashes (`audio-device`).
    public var name: String
    /// The value's placeholder in help (`PCM`); nil for a flag that takes no value.
    public var value: String?
    /// One line of help.
    public var help: String

    /// Creates an option.
    public init(_ name: String, value: String? = nil, help: String) {
        self.name = name
        self.value = value
        self.help = help
    }

    /// The option as the help table shows it on the left: `--audio-device PCM`.
    public var synopsis: String { "--\(name)" + (value.map { " " + $0 } ?? "") }

    /// The options as a help table, one per line: the synopsis, then the help in a column that starts at least
    /// `minimumColumn` characters in and at least two spaces after the longest synopsis, so that no long option
    /// runs into its description.
    public static func helpTable(_ options: [OptionSpec], minimumColumn: Int = 20) -> String {
        let column = max(minimumColumn, (options.map { $0.synopsis.count }.max() ?? 0) + 4)
        return options.map { option in
            let left = "  " + option.synopsis
            return left + String(repeating: " ", count: column - left.count) + option.help
        }.joined(separator: "\n")
    }
}

/// The command line, parsed: options by name and the positional arguments in order.
public struct ParsedArguments: Sendable, Equatable {
    /// Option values by long name (the last one given, when an option is given more than once); a flag has the
    /// value "".
    public var options: [String: String] = [:]
    /// Every value given to each option, in order (`cast send --to kitchen --to study`).
    public var allValues: [String: [String]] = [:]
    /// Positional arguments (`-` is one).
    public var positionals: [String] = []

    /// Creates an empty result.
    public init() {}

    /// Whether a flag or option was given.
    public func has(_ name: String) -> Bool { options[name] != nil }

    /// Every value given to option `name`, in order; empty when it was not given.
    public func values(_ name: String) -> [String] { allValues[name] ?? [] }
}

/// A mistake in the command line: the message is one line; the exit code is 2.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The one-line message.
    public let message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Parses `--name value`, `--name=value`, flags and positionals (a negative number is one); `--` ends options.
/// - Throws: `UsageError` for an unknown option (naming the closest valid spelling), a missing value,
///   or a value given to a flag.
public func parseArguments(_ arguments: some Sequence<String>, options specs: [OptionSpec]) throws(UsageError)
    -> ParsedArguments
{
    var result = ParsedArguments()
    var iterator = arguments.makeIterator()
    var onlyPositionals = false
    while let argument = iterator.next() {
        // `-10` is a value (a relative seek), not an option: no option looks like a number.
        guard !onlyPositionals, argument.hasPrefix("-"), argument != "-", Double(argument) == nil else {
            result.positionals.append(argument)
            continue
        }
        if argument == "--" {
            onlyPositionals = true
            continue
        }
        guard argument.hasPrefix("--") else {
            throw UsageError(
                "unknown option '\(argument)'\(suggestion(for: argument, among: specs.map { "--" + $0.name }))")
        }
        var name = String(argument.dropFirst(2))
        var inlineValue: String?
        if let equals = name.firstIndex(of: "=") {
            inlineValue = String(name[name.index(after: equals)...])
            name = String(name[..<equals])
        }
        guard let spec = specs.first(where: { $0.name == name }) else {
            throw UsageError(
                "unknown option '--\(name)'\(suggestion(for: "--" + name, among: specs.map { "--" + $0.name }))")
        }
        if spec.value == nil {
            guard inlineValue == nil else { throw UsageError("option '--\(name)' takes no value") }
            result.options[name] = ""
        } else if let value = inlineValue ?? iterator.next() {
            result.options[name] = value
            result.allValues[name, default: []].append(value)
        } else {
            throw UsageError("option '--\(name)' needs a value (\(spec.value!))")
        }
    }
    return result
}

/// "; did you mean 'x'?" when a candidate is close enough to be a typo, else "".
public func suggestion(for word: String, among candidates: [String]) -> String {
    let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, word.count / 3) else { return "" }
    return "; did you mean '\(best.0)'?"
}

/// Levenshtein distance between two strings.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    var current = Array(repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
