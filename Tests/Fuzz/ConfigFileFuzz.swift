// castd's config file parser (`ConfigFile.parse`), on arbitrary bytes read as UTF-8.
//
// Invariants: no trap; each entry has a non-empty key of letters, digits and '-', a value with no newline
// Character (so a CRLF file is lines too), no '#' and no surrounding blanks, and a line number within the
// file, increasing; an error names a line within the file; writing the entries back as `key = value` lines
// (at their line numbers) parses to the same entries.

/// Lines as the parser counts them: every newline Character ("\n", "\r\n", "\r", VT, FF, NEL, LS, PS) ends one.
private func lineCount(_ text: String) -> Int {
    text.reduce(1) { $0 + ($1.isNewline ? 1 : 0) }
}

private func isBlank(_ c: Character?) -> Bool { c == " " || c == "\t" || c == "\r" }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    let lines = lineCount(text)
    let entries: [ConfigFile.Entry]
    do {
        entries = try ConfigFile.parse(text)
    } catch {
        if text.utf8.count <= ConfigFile.maximumSize {
            invariant(error.message.hasPrefix("line "), "error without a line: \(error.message)")
            let number = Int(error.message.dropFirst(5).prefix { $0.isASCII && $0.isNumber }) ?? 0
            invariant((1...lines).contains(number), "error names line \(number) of \(lines)")
        }
        return 0
    }
    var previous = 0
    for entry in entries {
        let shown = "\(entry.key.debugDescription) = \(entry.value.debugDescription) at line \(entry.line)"
        invariant(
            !entry.key.isEmpty && entry.key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }, "bad key: \(shown)")
        invariant(
            !entry.value.contains(where: \.isNewline) && !entry.key.contains(where: \.isNewline),
            "entry spans lines: \(shown)")
        invariant(!entry.value.unicodeScalars.contains("#"), "value holds a comment: \(shown)")
        invariant(!isBlank(entry.value.first) && !isBlank(entry.value.last), "value not trimmed: \(shown)")
        invariant(
            entry.line > previous && entry.line <= lines, "line \(entry.line) after \(previous) of \(lines): \(shown)")
        previous = entry.line
    }
    var rendered: [String] = Array(repeating: "", count: previous)
    for entry in entries { rendered[entry.line - 1] = "\(entry.key) = \(entry.value)" }
    let again = try? ConfigFile.parse(rendered.joined(separator: "\n"))
    invariant(again == entries, "rewritten entries parse differently: \(entries) vs \(String(describing: again))")
    return 0
}
