/// JSON for `cast --json`, without Foundation's `JSONSerialization` (which would link all of Foundation into `cast`;
/// docs/performance.md, "`cast` start-up").

/// `object` (dictionaries with string keys, arrays, strings, numbers, booleans, nil) as one line of JSON, keys sorted,
/// as `JSONSerialization` wrote it with `.sortedKeys` and `.withoutEscapingSlashes`; a number that is not finite
/// (which JSON cannot say) is written as null.
public func json(_ object: Any) -> String {
    var text = ""
    writeJSON(object, to: &text)
    return text
}

private func writeJSON(_ value: Any, to text: inout String) {
    switch value {
    case let optional as any OptionalValue:
        if let wrapped = optional.wrapped { writeJSON(wrapped, to: &text) } else { text += "null" }
    case let flag as Bool: text += flag ? "true" : "false"
    case let string as String: writeJSONString(string, to: &text)
    case let string as Substring: writeJSONString(String(string), to: &text)
    case let number as Double: text += jsonNumber(number)
    case let number as Float: text += jsonNumber(Double(number))
    case let number as any BinaryInteger: text += "\(number)"
    case let object as [String: Any]:
        text += "{"
        for (index, key) in object.keys.sorted().enumerated() {
            if index > 0 { text += "," }
            writeJSONString(key, to: &text)
            text += ":"
            writeJSON(object[key]!, to: &text)
        }
        text += "}"
    case let array as [Any]:
        text += "["
        for (index, element) in array.enumerated() {
            if index > 0 { text += "," }
            writeJSON(element, to: &text)
        }
        text += "]"
    default: writeJSONString("\(value)", to: &text)
    }
}

/// A whole double as an integer ("1", not "1.0"), as `JSONSerialization` writes it; others in Swift's shortest form.
private func jsonNumber(_ number: Double) -> String {
    guard number.isFinite else { return "null" }
    if number == number.rounded(), abs(number) < 1e15 { return "\(Int(number))" }
    return "\(number)"
}

private func writeJSONString(_ string: String, to text: inout String) {
    text += "\""
    for scalar in string.unicodeScalars {
        switch scalar {
        case "\"": text += "\\\""
        case "\\": text += "\\\\"
        case "\n": text += "\\n"
        case "\r": text += "\\r"
        case "\t": text += "\\t"
        case "\u{08}": text += "\\b"
        case "\u{0C}": text += "\\f"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: text.unicodeScalars.append(scalar)
        }
    }
    text += "\""
}

/// An `Optional` seen through `Any`, so that `writeJSON` can tell nil from a value.
private protocol OptionalValue {
    var wrapped: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrapped: Any? { map { $0 as Any } }
}
