/// A GVariant (GLib Reference Manual, "GVariant") as a Swift value: the D-Bus type system
/// (D-Bus Specification, "Type System").
///
/// Shapes:
/// - Basic values map one to one (`b y n q i u x t d s o g`); a Unix fd handle (`h`) is `.handle`, an index
///   into the message's list of file descriptors (D-Bus Specification, "Type System": UNIX_FD).
/// - `.array(elementType:_:)` is `a<elementType>`; the element type is a GVariant type string such as
///   "s" or "a{sv}" and is needed for empty arrays.
/// - `.dictionary(valueType:_:)` is `a{s<valueType>}`, e.g. `a{sv}` when `valueType` is "v" (values are
///   then `.variant`s). Keys are written in sorted order.
/// - Dictionaries whose keys are not strings (e.g. `a{oa{sv}}`, `a{ua{sv}}`) are
///   `.array(elementType: "{<key><value>}", [.tuple([key, value]), ...])`: each entry a two-element tuple.
/// - A maybe value (`m<type>`, not used on D-Bus) arrives as `.array(elementType: "<type>", [])` for
///   Nothing and with one element for Just.
///
/// Going into GVariant, values are made valid rather than rejected: an embedded NUL in a string becomes
/// U+FFFD; an invalid object path becomes "/org/mpris/MediaPlayer2/TrackList/NoTrack" (MPRIS2's "no track"
/// path); an invalid signature becomes ""; array elements of another type are converted where it loses
/// nothing (see `Variant.converted(to:)`) and dropped with a logged warning otherwise; an invalid element
/// type becomes "v".
public indirect enum Variant: Equatable, Sendable {
    /// `b`
    case bool(Bool)
    /// `y`
    case byte(UInt8)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i` (and `h` when received)
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `d`
    case double(Double)
    /// `s`: UTF-8 text without NUL.
    case string(String)
    /// `o`: a D-Bus object path such as "/org/mpris/MediaPlayer2".
    case objectPath(String)
    /// `g`: a D-Bus type signature such as "a{sv}".
    case signature(String)
    /// `h`: an index into the Unix file descriptors sent with the message (`DBusFileDescriptors`,
    /// `DBusConnection.call(…fileDescriptors:)`), not a descriptor number.
    case handle(Int32)
    /// `v`: a value of any type, boxed.
    case variant(Variant)
    /// `a<elementType>`: elements all of type `elementType` (a GVariant type string).
    case array(elementType: String, [Variant])
    /// `a{s<valueType>}`: a dictionary with string keys.
    case dictionary(valueType: String, [String: Variant])
    /// `(...)`: a structure; `.tuple([])` is the unit type `()`.
    case tuple([Variant])

    /// The GVariant type string of this value, e.g. "s", "as", "a{sv}", "(ii)".
    public var typeString: String {
        switch self {
        case .bool: "b"
        case .byte: "y"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .handle: "h"
        case .variant: "v"
        case .array(let elementType, _): "a" + elementType
        case .dictionary(let valueType, _): "a{s" + valueType + "}"
        case .tuple(let items): "(" + items.map(\.typeString).joined() + ")"
        }
    }

    /// The value inside any number of `.variant` layers (the value itself when it is not a `.variant`).
    public var unboxed: Variant {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    // The accessors below look through `.variant` layers and return nil for other cases.

    /// The text of a `.string`, `.objectPath` or `.signature`.
    public var string: String? {
        switch unboxed {
        case .string(let s), .objectPath(let s), .signature(let s): s
        default: nil
        }
    }

    /// The path of an `.objectPath`.
    public var objectPath: String? {
        if case .objectPath(let s) = unboxed { s } else { nil }
    }

    /// The value of a `.bool`.
    public var bool: Bool? {
        if case .bool(let b) = unboxed { b } else { nil }
    }

    /// The value of a `.double`, or of any integer case converted to `Double`.
    public var double: Double? {
        if case .double(let d) = unboxed { return d }
        if let i = int64 { return Double(i) }
        if let u = uint64 { return Double(u) }
        return nil
    }

    /// The value of any integer case when it fits in `Int64`.
    public var int64: Int64? {
        switch unboxed {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// The value of any integer case when it fits in `UInt64` (not negative).
    public var uint64: UInt64? {
        if case .uint64(let v) = unboxed { return v }
        return int64.flatMap { UInt64(exactly: $0) }
    }

    /// The value of any integer case when it fits in `Int32`.
    public var int32: Int32? {
        int64.flatMap { Int32(exactly: $0) }
    }

    /// The value of any integer case when it fits in `UInt32`.
    public var uint32: UInt32? {
        int64.flatMap { UInt32(exactly: $0) }
    }

    /// The elements of an `.array`.
    public var array: [Variant]? {
        if case .array(_, let items) = unboxed { items } else { nil }
    }

    /// The entries of a `.dictionary`.
    public var dictionary: [String: Variant]? {
        if case .dictionary(_, let entries) = unboxed { entries } else { nil }
    }

    /// The elements of a `.tuple`.
    public var tuple: [Variant]? {
        if case .tuple(let items) = unboxed { items } else { nil }
    }

    /// An array of strings, `as`.
    public static func strings(_ s: [String]) -> Variant {
        .array(elementType: "s", s.map { .string($0) })
    }

    /// A string-keyed dictionary of boxed values, `a{sv}` (each value is wrapped in `.variant` unless it
    /// already is one).
    public static func vardict(_ d: [String: Variant]) -> Variant {
        .dictionary(valueType: "v", d.mapValues { value in
            if case .variant = value { value } else { .variant(value) }
        })
    }

    /// This value converted to the GVariant type `type` where that loses nothing, or nil.
    ///
    /// Converted: any integer case to another integer type when the value fits; any integer to `d`; text
    /// among `s`, `o` and `g`; anything to `v` (boxed); arrays, dictionaries and tuples element by element
    /// (a two-element `.tuple` also to a dictionary entry type `{KV}`, the shape of non-string-keyed
    /// dictionary entries). A `.variant` converts to nothing but `v`; a `.dictionary` not to a
    /// non-string-keyed dictionary type. The value itself when its type is already `type`.
    public func converted(to type: String) -> Variant? {
        if typeString == type { return self }
        if type == "v" { return .variant(self) }
        if case .variant = self { return nil }
        switch type {
        case "y": return int64.flatMap { UInt8(exactly: $0) }.map { .byte($0) }
        case "n": return int64.flatMap { Int16(exactly: $0) }.map { .int16($0) }
        case "q": return int64.flatMap { UInt16(exactly: $0) }.map { .uint16($0) }
        case "i": return int32.map { .int32($0) }
        case "u": return uint32.map { .uint32($0) }
        case "x": return int64.map { .int64($0) }
        case "t": return uint64.map { .uint64($0) }
        case "d": return double.map { .double($0) }
        case "s", "o", "g":
            guard case let text? = textValue else { return nil }
            return type == "s" ? .string(text) : type == "o" ? .objectPath(text) : .signature(text)
        default: break
        }
        let children = VariantType.children(of: type)
        switch (self, type.first) {
        case (.array(_, let items), "a"):
            guard let element = children.first else { return nil }
            var converted: [Variant] = []
            converted.reserveCapacity(items.count)
            for item in items {
                guard let c = item.converted(to: element) else { return nil }
                converted.append(c)
            }
            return .array(elementType: element, converted)
        case (.dictionary(_, let entries), "a"):
            guard let element = children.first, element.hasPrefix("{s") else { return nil }
            let valueType = String(element.dropFirst(2).dropLast())
            var converted: [String: Variant] = [:]
            for (key, value) in entries {
                guard let c = value.converted(to: valueType) else { return nil }
                converted[key] = c
            }
            return .dictionary(valueType: valueType, converted)
        case (.tuple(let items), "("), (.tuple(let items), "{"):
            guard items.count == children.count else { return nil }
            var converted: [Variant] = []
            for (item, childType) in zip(items, children) {
                guard let c = item.converted(to: childType) else { return nil }
                converted.append(c)
            }
            return .tuple(converted)
        default:
            return nil
        }
    }

    /// The text of a `.string`, `.objectPath` or `.signature` (not looking through `.variant`).
    private var textValue: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        default: nil
        }
    }
}

/// GVariant type strings, parsed without GLib.
enum VariantType {
    /// The length in characters of the first complete type at the start of `type` (0 if malformed).
    static func firstLength(_ type: Substring) -> Int {
        guard let c = type.first else { return 0 }
        switch c {
        case "a", "m":
            let rest = firstLength(type.dropFirst())
            return rest == 0 ? 0 : 1 + rest
        case "(", "{":
            let close: Character = c == "(" ? ")" : "}"
            var offset = 1
            var rest = type.dropFirst()
            while let next = rest.first {
                if next == close { return offset + 1 }
                let n = firstLength(rest)
                if n == 0 { return 0 }
                offset += n
                rest = rest.dropFirst(n)
            }
            return 0
        default:
            return "bynqiuxthdsogv*?r".contains(c) ? 1 : 0
        }
    }

    /// The types directly inside a container type: the element of `aT`/`mT`, the members of `(...)` or
    /// `{KV}`; empty for basic types and `v`.
    static func children(of type: String) -> [String] {
        guard let c = type.first else { return [] }
        switch c {
        case "a", "m":
            return [String(type.dropFirst())]
        case "(", "{":
            var rest = type.dropFirst().dropLast()
            var result: [String] = []
            while !rest.isEmpty {
                let n = firstLength(rest)
                if n == 0 { break }
                result.append(String(rest.prefix(n)))
                rest = rest.dropFirst(n)
            }
            return result
        default:
            return []
        }
    }
}
