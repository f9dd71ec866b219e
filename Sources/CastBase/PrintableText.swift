/// Text that came from the network (a sender's or a receiver's name, a speaker's name, an error message), made safe
/// to print or log: every control character is written as an escape, so that such text cannot start a line of its
/// own (a forged `Pairing PIN: 1234` line), drive the terminal (ESC sequences, C1 controls) or reorder what follows
/// it on screen (bidirectional overrides). A backslash is doubled, so that what is shown reads back unambiguously.
///
///     printable("Kitchen\nPairing PIN: 1234") == #"Kitchen\nPairing PIN: 1234"#
///     printable("\u{1B}[2J") == #"\u{1B}[2J"#
///
/// Text without any of these characters comes back unchanged. Every place that prints or logs network text goes
/// through this one function (docs/security.md, "Names from the network").
public func printable(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    result.reserveCapacity(text.utf8.count + 8)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": result += #"\\"#
        case "\n": result += #"\n"#
        case "\r": result += #"\r"#
        case "\t": result += #"\t"#
        case _ where needsEscape(scalar): result += #"\u{"# + String(scalar.value, radix: 16, uppercase: true) + "}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}

/// Control characters (C0, DEL, C1), line and paragraph separators, bidirectional controls, and the backslash.
private func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x5C, 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
    case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
}
