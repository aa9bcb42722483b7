@preconcurrency import Glibc
import CGio

/// One command-line option of an `OptionParser`; `value` is filled in by `OptionParser.parse`.
public final class Option<Value> {
    /// The parsed value: the default (false or nil) until `parse` sees the option; the last occurrence
    /// wins when it is given twice.
    public internal(set) var value: Value
    private let initial: Value

    init(_ initial: Value) {
        self.initial = initial
        value = initial
    }

    func reset() { value = initial }
}

/// A command-line parser over GLib's `GOptionContext` (GLib Reference Manual, "Commandline option parser"),
/// with GLib's syntax: `--name value`, `--name=value`, `-n value`, grouped short flags (`-ab`), `--`
/// ending the options, and `--help`/`-h` printing GLib's help and exiting with status 0.
public final class OptionParser {
    private let parameterString: String
    private let summary: String?
    private let details: String?
    private var specs: [OptionSpec] = []

    /// - Parameters:
    ///   - parameterString: shown after "Usage: program [OPTION…]" in the help, e.g. "[TEXT…]".
    ///   - summary: shown before the option list.
    ///   - description: shown after the option list.
    public init(parameterString: String, summary: String? = nil, description: String? = nil) {
        self.parameterString = parameterString
        self.summary = summary
        self.details = description
    }

    /// Sets the program name used in help and error messages (`g_set_prgname`).
    public static func setProgramName(_ name: String) {
        g_set_prgname(name)
    }

    /// A flag without argument (`G_OPTION_ARG_NONE`): `--long` or `-s`; true when given.
    /// - Parameters:
    ///   - long: the long name without dashes, e.g. "verbose".
    ///   - short: a one-letter ASCII alias, or nil.
    public func flag(_ long: String, short: Character? = nil, _ description: String) -> Option<Bool> {
        add(false, Kind.flag, long, short, description, argument: nil)
    }

    /// An option with a text argument (`G_OPTION_ARG_STRING`, converted from the locale's encoding to
    /// UTF-8); nil when not given.
    /// - Parameters:
    ///   - argument: the argument's name in the help, e.g. "VOICE".
    public func string(_ long: String, short: Character? = nil, _ description: String,
                       argument: String) -> Option<String?> {
        add(nil, Kind.string, long, short, description, argument: argument)
    }

    /// An option with a decimal integer argument (optional sign, 64-bit range); nil when not given. Other
    /// text fails the parse with GLib's message ("Cannot parse integer value “x” for --long").
    public func integer(_ long: String, short: Character? = nil, _ description: String,
                        argument: String) -> Option<Int?> {
        add(nil, Kind.integer, long, short, description, argument: argument)
    }

    /// An option with a floating-point argument (`g_strtod`: "1.5" in any locale); nil when not given.
    /// Other text fails the parse with GLib's message ("Cannot parse double value “x” for --long").
    public func double(_ long: String, short: Character? = nil, _ description: String,
                       argument: String) -> Option<Double?> {
        add(nil, Kind.double, long, short, description, argument: argument)
    }

    private func add<Value>(_ initial: Value, _ kind: (Option<Value>) -> Kind, _ long: String, _ short: Character?,
                            _ description: String, argument: String?) -> Option<Value> {
        let option = Option(initial)
        specs.append(OptionSpec(long: long, short: short, description: description, argument: argument,
                                kind: kind(option)))
        return option
    }

    /// Parses `arguments` (`g_option_context_parse_strv`), filling in every option's `value`.
    ///
    /// - Parameter arguments: the whole command line, `argv[0]` included.
    /// - Returns: the positional arguments (without `argv[0]`), in order, as GLib leaves them: a lone "-"
    ///   is kept, and `--` is removed unless it is needed to keep an argument after it from being read as
    ///   an option.
    /// - Throws: `GLibError` in the `G_OPTION_ERROR` domain with GLib's message, e.g.
    ///   "Unknown option --foo" or "Missing argument for --voice".
    public func parse(_ arguments: [String]) throws(GLibError) -> [String] {
        for spec in specs { spec.kind.reset() }
        let context = BuiltContext(self)
        // A NULL-terminated, g_malloc'ed vector: GLib frees the elements it consumes.
        let argv = g_malloc0(gsize(MemoryLayout<UnsafeMutablePointer<gchar>?>.stride * (arguments.count + 1)))!
            .assumingMemoryBound(to: UnsafeMutablePointer<gchar>?.self)
        for (i, argument) in arguments.enumerated() { argv[i] = g_strdup(argument) }
        var strv: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? = argv
        defer { g_strfreev(strv) }
        var error: UnsafeMutablePointer<GError>?
        guard g_option_context_parse_strv(context.context, &strv, &error) != 0 else {
            throw GLibError(consuming: error!)
        }
        context.collect()
        var remaining: [String] = []
        if let strv {
            var i = 1
            while let argument = strv[i] {
                remaining.append(String(cString: argument))
                i += 1
            }
        }
        return remaining
    }

    /// GLib's help text for these options (`g_option_context_get_help` with the main group), as `--help`
    /// prints it.
    public var helpText: String {
        let context = BuiltContext(self)
        return takeString(g_option_context_get_help(context.context, 1, nil)) ?? ""
    }

    fileprivate enum Kind {
        case flag(Option<Bool>)
        case string(Option<String?>)
        case integer(Option<Int?>)
        case double(Option<Double?>)

        func reset() {
            switch self {
            case .flag(let o): o.reset()
            case .string(let o): o.reset()
            case .integer(let o): o.reset()
            case .double(let o): o.reset()
            }
        }
    }

    fileprivate struct OptionSpec {
        let long: String
        let short: Character?
        let description: String
        let argument: String?
        let kind: Kind

        /// The `short_name` of the entry: the ASCII letter, or 0 for none (or one GLib cannot use).
        var shortName: CChar {
            guard let short, short.isASCII, let ascii = short.asciiValue, ascii > 32, ascii != UInt8(ascii: "-"),
                  ascii < 127 else { return 0 }
            return CChar(bitPattern: ascii)
        }

        /// Stores an integer or double argument of this option; false with `error` set when it does not parse.
        func store(_ text: String, optionName: String,
                   error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?) -> Bool {
            switch kind {
            case .integer(let option):
                var digits = Substring(text)
                if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
                guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    return fail("Cannot parse integer value “\(text)” for \(optionName)", error)
                }
                guard let value = Int(text) else {
                    return fail("Integer value “\(text)” for \(optionName) out of range", error)
                }
                option.value = value
            case .double(let option):
                var end: UnsafeMutablePointer<gchar>?
                errno = 0
                let value = text.withCString { start in
                    let value = g_strtod(start, &end)
                    if end == UnsafeMutablePointer(mutating: start) || end?.pointee != 0 { end = nil }
                    return value
                }
                guard end != nil else { return fail("Cannot parse double value “\(text)” for \(optionName)", error) }
                guard errno != ERANGE else {
                    return fail("Double value “\(text)” for \(optionName) out of range", error)
                }
                option.value = value
            case .flag, .string:
                break
            }
            return true
        }

        private func fail(_ message: String, _ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?) -> Bool {
            g_set_error_literal(error, g_option_error_quark(), Int32(G_OPTION_ERROR_BAD_VALUE.rawValue), message)
            return false
        }
    }

    /// A `GOptionContext` with one main group holding an entry per option, and the C memory behind it
    /// (names, storage), freed together.
    private final class BuiltContext {
        let context: OpaquePointer
        private let specs: [OptionSpec]
        private var strings: [UnsafeMutablePointer<CChar>?] = []
        private let entries: UnsafeMutablePointer<GOptionEntry>
        private let flags: UnsafeMutablePointer<gboolean>
        private let texts: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>

        init(_ parser: OptionParser) {
            specs = parser.specs
            let count = specs.count
            flags = .allocate(capacity: max(count, 1))
            flags.initialize(repeating: 0, count: max(count, 1))
            texts = .allocate(capacity: max(count, 1))
            texts.initialize(repeating: nil, count: max(count, 1))
            entries = .allocate(capacity: count + 1)
            entries.initialize(repeating: GOptionEntry(), count: count + 1)

            context = g_option_context_new(parser.parameterString)
            if let summary = parser.summary { g_option_context_set_summary(context, summary) }
            if let details = parser.details { g_option_context_set_description(context, details) }

            let parseNumber: GOptionArgFunc = { name, value, data, error in
                let context = Unmanaged<BuiltContext>.fromOpaque(data!).takeUnretainedValue()
                return context.store(optionName: String(cString: name!), value: String(cString: value!), error: error)
                    ? 1 : 0
            }
            for (i, spec) in specs.enumerated() {
                var entry = GOptionEntry()
                entry.long_name = UnsafePointer(copy(spec.long))
                entry.short_name = spec.shortName
                entry.description = UnsafePointer(copy(spec.description))
                entry.arg_description = spec.argument.map { UnsafePointer(copy($0)) } ?? nil
                switch spec.kind {
                case .flag:
                    entry.arg = G_OPTION_ARG_NONE
                    entry.arg_data = UnsafeMutableRawPointer(flags + i)
                case .string:
                    entry.arg = G_OPTION_ARG_STRING
                    entry.arg_data = UnsafeMutableRawPointer(texts + i)
                case .integer, .double:
                    entry.arg = G_OPTION_ARG_CALLBACK
                    entry.arg_data = unsafeBitCast(parseNumber, to: UnsafeMutableRawPointer.self)
                }
                entries[i] = entry
            }
            let group = g_option_group_new(nil, nil, nil, Unmanaged.passUnretained(self).toOpaque(), nil)
            g_option_group_add_entries(group, entries)
            g_option_context_set_main_group(context, group)
        }

        deinit {
            g_option_context_free(context)
            for i in 0..<max(specs.count, 1) { g_free(texts[i]) }
            texts.deallocate()
            flags.deallocate()
            entries.deinitialize(count: specs.count + 1)
            entries.deallocate()
            strings.forEach { g_free($0) }
        }

        /// Copies the flag and string values GLib stored into the options.
        func collect() {
            for (i, spec) in specs.enumerated() {
                switch spec.kind {
                case .flag(let option): option.value = flags[i] != 0
                case .string(let option): option.value = texts[i].map { String(cString: $0) }
                case .integer, .double: break
                }
            }
        }

        /// The callback of integer and double options; `optionName` is "--long" or "-s" as typed.
        func store(optionName: String, value: String,
                   error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?) -> Bool {
            let spec = specs.first { "--" + $0.long == optionName }
                ?? specs.first { $0.shortName != 0 && optionName == "-" + String(UnicodeScalar(UInt8($0.shortName))) }
            return spec?.store(value, optionName: optionName, error: error) ?? true
        }

        private func copy(_ text: String) -> UnsafeMutablePointer<CChar>? {
            let pointer = g_strdup(text)
            strings.append(pointer)
            return pointer
        }
    }
}
