internal import CAvahi

/// Conversions between a TXT record as a dictionary and avahi's `AvahiStringList`.
enum TXTRecord {
    /// A new string list holding `txt` as `key=value` items in key order; the caller frees it with
    /// `avahi_string_list_free`. `nil` is the empty list (and also what avahi returns when out of memory).
    static func makeStringList(_ txt: [String: String]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        // avahi_string_list_add_* prepends: add in reverse key order so the list reads in key order.
        for key in txt.keys.sorted().reversed() {
            let value = Array(txt[key, default: ""].utf8)
            list = value.withUnsafeBufferPointer { bytes in
                cast_avahi_string_list_add_pair_arbitrary(list, key, bytes.baseAddress, bytes.count)
            }
        }
        return list
    }

    /// The `key=value` items of `list`; an item without `=` maps to "", bytes that are not UTF-8 are replaced.
    static func dictionary(from list: UnsafeMutablePointer<AvahiStringList>?) -> [String: String] {
        var txt: [String: String] = [:]
        var item = list
        while let current = item {
            var key: UnsafeMutablePointer<CChar>? = nil
            var value: UnsafeMutablePointer<CChar>? = nil
            var size = 0
            if cast_avahi_string_list_get_pair(current, &key, &value, &size) == 0, let key {
                let valueText =
                    value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: size), as: UTF8.self) } ?? ""
                txt[String(cString: key)] = valueText
            }
            cast_avahi_free(key)
            cast_avahi_free(value)
            item = cast_avahi_string_list_get_next(current)
        }
        return txt
    }
}
