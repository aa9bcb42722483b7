/// BCP 47 language tags: syntax check and canonical casing.
///
/// Source: RFC 5646 (syntax, section 2.1; casing, section 2.1.1). The check is the tag's shape, not the
/// IANA registry: `qq-ZZ` is well formed and merely unknown.
enum LanguageTag {
    /// The subtags of `tag` with `_` read as `-`, or nil if it is not a well-formed tag: subtags of 1 to 8
    /// ASCII letters or digits; a primary subtag of 2 to 8 letters (or the singleton `x`/`i`); every
    /// singleton followed by a subtag.
    static func subtags(_ tag: String) -> [Substring]? {
        let normalized = String(tag.map { $0 == "_" ? "-" : $0 })
        let parts = normalized.split(separator: "-", omittingEmptySubsequences: false)
        guard let primary = parts.first else { return nil }
        for part in parts {
            guard (1...8).contains(part.count), part.allSatisfy(isAlphanumeric) else { return nil }
        }
        let primaryIsSingleton = primary.count == 1 && "xXiI".contains(primary.first!)
        guard primaryIsSingleton || (primary.count >= 2 && primary.allSatisfy(isLetter)) else { return nil }
        if parts.last!.count == 1 { return nil }
        for i in parts.indices.dropLast() where parts[i].count == 1 && parts[i + 1].count == 1 {
            return nil
        }
        return parts
    }

    /// `tag` cased the BCP 47 way (`en-us` → `en-US`, `cmn-latn-pinyin` → `cmn-Latn-pinyin`,
    /// `en-gb-x-rp` → `en-GB-x-rp`), `_` read as `-`; nil if malformed (see ``subtags(_:)``).
    static func canonical(_ tag: String) -> String? {
        guard let parts = subtags(tag) else { return nil }
        var out: [String] = []
        var afterSingleton = false
        for (i, part) in parts.enumerated() {
            let lower = part.lowercased()
            if i == 0 || afterSingleton {
                out.append(lower)
            } else if part.count == 1 {
                afterSingleton = true
                out.append(lower)
            } else if part.count == 2 && part.allSatisfy(isLetter) {
                out.append(lower.uppercased())
            } else if part.count == 4 && part.allSatisfy(isLetter) {
                out.append(lower.prefix(1).uppercased() + lower.dropFirst())
            } else {
                out.append(lower)
            }
            if i == 0 && part.count == 1 { afterSingleton = true }
        }
        return out.joined(separator: "-")
    }

    /// The lookup chain of RFC 4647 section 3.4: the tag, then subtags removed from the right, a singleton
    /// removed together with the subtag it introduces. `en-Latn-US` → `en-Latn-US`, `en-Latn`, `en`.
    static func fallbacks(_ canonicalTag: String) -> [String] {
        var parts = canonicalTag.split(separator: "-").map(String.init)
        var chain: [String] = []
        while !parts.isEmpty {
            chain.append(parts.joined(separator: "-"))
            parts.removeLast()
            while parts.count > 1, parts.last!.count == 1 { parts.removeLast() }
        }
        return chain
    }

    private static func isLetter(_ c: Character) -> Bool {
        c.isASCII && c.isLetter
    }

    private static func isAlphanumeric(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber)
    }
}
