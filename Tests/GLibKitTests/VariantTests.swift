import CGio
import Testing
@testable import GLibKit

/// Converts through a real GVariant and back; also returns GLib's type string of the GVariant.
private func roundTrip(_ value: Variant) -> (Variant, String) {
    let gvariant = value.makeGVariant()
    defer { g_variant_unref(gvariant) }
    return (Variant(borrowing: gvariant), String(cString: g_variant_get_type_string(gvariant)))
}

/// GLib's text form of the GVariant built from `value` (`g_variant_print`).
private func printed(_ value: Variant) -> String {
    let gvariant = value.makeGVariant()
    defer { g_variant_unref(gvariant) }
    return takeString(g_variant_print(gvariant, 1))!
}

/// Parses GLib's text form (`g_variant_parse`) and converts the result.
private func parsed(_ text: String) -> Variant {
    let gvariant = g_variant_ref_sink(g_variant_parse(nil, text, nil, nil, nil))!
    defer { g_variant_unref(gvariant) }
    return Variant(borrowing: gvariant)
}

@Suite struct VariantTests {
    static let everyCase: [Variant] = [
        .bool(true), .bool(false), .byte(0), .byte(255), .int16(-32768), .uint16(65535),
        .int32(Int32.min), .uint32(UInt32.max), .int64(Int64.min), .int64(Int64.max), .uint64(UInt64.max),
        .double(-0.5), .double(1e300), .string(""), .string("héllo wörld ✓ 𝄞"), .objectPath("/"),
        .objectPath("/org/mpris/MediaPlayer2"), .signature("a{sv}"), .signature(""), .handle(0), .handle(7),
        .variant(.int32(7)), .variant(.variant(.string("deep"))),
        .array(elementType: "s", []), .array(elementType: "a{sv}", []), .strings(["a", "b", ""]),
        .array(elementType: "ay", [.array(elementType: "y", [.byte(1), .byte(2)])]),
        .array(elementType: "v", [.variant(.bool(true)), .variant(.strings(["x"]))]),
        .dictionary(valueType: "v", [:]), .vardict(["a": .int32(1), "b": .strings(["c"]), "d": .vardict([:])]),
        .dictionary(valueType: "s", ["k": .string("v"), "k2": .string("v2")]),
        .dictionary(valueType: "a{sv}", ["outer": .vardict(["inner": .double(2)])]),
        .array(elementType: "{is}", [.tuple([.int32(1), .string("one")]), .tuple([.int32(2), .string("two")])]),
        .array(elementType: "{oa{sv}}", [.tuple([.objectPath("/a"), .vardict(["x": .uint64(3)])])]),
        .tuple([]), .tuple([.int32(1), .string("s"), .tuple([.bool(false)])]),
        .array(elementType: "(ix)", [.tuple([.int32(1), .int64(2)])]),
    ]

    @Test(arguments: everyCase)
    func roundTripsEveryCase(_ value: Variant) {
        let (back, type) = roundTrip(value)
        #expect(back == value)
        #expect(type == value.typeString)
    }

    @Test func readsMaybeAndHandleTypes() {
        #expect(parsed("just 5") == .array(elementType: "i", [.int32(5)]))
        #expect(parsed("@mi nothing") == .array(elementType: "i", []))
        #expect(parsed("handle 3") == .handle(3))
        #expect(parsed("{1, 'one'}") == .tuple([.int32(1), .string("one")]))
        #expect(parsed("{'k': <1>}") == .vardict(["k": .int32(1)]))
        #expect(parsed("[(1, 'a')]") == .array(elementType: "(is)", [.tuple([.int32(1), .string("a")])]))
    }

    @Test func repairsStringsPathsAndSignatures() {
        #expect(roundTrip(.string("a\u{0}b")).0 == .string("a\u{FFFD}b"))
        #expect(roundTrip(.objectPath("not a path")).0 == .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"))
        #expect(roundTrip(.objectPath("/trailing/")).0 == .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"))
        #expect(roundTrip(.signature("a{")).0 == .signature(""))
    }

    @Test func convertsOrDropsArrayElementsOfAnotherType() {
        // Integers fitting the element type are converted; a string is dropped.
        let (back, type) = roundTrip(.array(elementType: "x", [.int32(1), .uint16(2), .string("no")]))
        #expect(type == "ax")
        #expect(back == .array(elementType: "x", [.int64(1), .int64(2)]))
        // Values of an a{sv} dictionary are boxed when they are not variants yet.
        let (dict, _) = roundTrip(.dictionary(valueType: "v", ["n": .int32(1)]))
        #expect(dict == .vardict(["n": .int32(1)]))
        // An invalid element type becomes "v".
        let (boxed, boxedType) = roundTrip(.array(elementType: "not a type", [.int32(1)]))
        #expect(boxedType == "av")
        #expect(boxed == .array(elementType: "v", [.variant(.int32(1))]))
        // Non-string keys arrive as pairs, and so does a mis-shaped entry get dropped.
        let (pairs, pairType) = roundTrip(.array(elementType: "{us}", [.tuple([.int32(4), .string("x")]), .int32(1)]))
        #expect(pairType == "a{us}")
        #expect(pairs == .array(elementType: "{us}", [.tuple([.uint32(4), .string("x")])]))
    }

    @Test func printsAsGLibDoes() {
        #expect(printed(.vardict(["b": .bool(true), "a": .string("x")])) == "{'a': <'x'>, 'b': <true>}")
        #expect(printed(.tuple([.objectPath("/o"), .uint64(5)])) == "(objectpath '/o', uint64 5)")
    }

    @Test func convertsToTypes() {
        #expect(Variant.int32(5).converted(to: "x") == .int64(5))
        #expect(Variant.int64(-1).converted(to: "t") == nil)
        #expect(Variant.int64(300).converted(to: "y") == nil)
        #expect(Variant.uint32(3).converted(to: "d") == .double(3))
        #expect(Variant.double(3).converted(to: "i") == nil)
        #expect(Variant.string("/a").converted(to: "o") == .objectPath("/a"))
        #expect(Variant.string("s").converted(to: "v") == .variant(.string("s")))
        #expect(Variant.variant(.int32(1)).converted(to: "i") == nil)
        #expect(Variant.tuple([.int32(1), .string("x")]).converted(to: "(xs)") == .tuple([.int64(1), .string("x")]))
        #expect(Variant.tuple([.int32(1)]).converted(to: "(xs)") == nil)
        #expect(Variant.dictionary(valueType: "i", ["a": .int32(1)]).converted(to: "a{sv}")
                == .vardict(["a": .int32(1)]))
        #expect(Variant.strings(["a"]).converted(to: "ao") == .array(elementType: "o", [.objectPath("a")]))
    }

    @Test func accessors() {
        let v = Variant.variant(.variant(.uint32(7)))
        #expect(v.unboxed == .uint32(7))
        #expect(v.int64 == 7)
        #expect(v.int32 == 7)
        #expect(v.uint64 == 7)
        #expect(v.double == 7)
        #expect(v.string == nil)
        #expect(Variant.int64(-1).uint64 == nil)
        #expect(Variant.uint64(UInt64.max).int64 == nil)
        #expect(Variant.int64(1 << 40).int32 == nil)
        #expect(Variant.objectPath("/p").string == "/p")
        #expect(Variant.objectPath("/p").objectPath == "/p")
        #expect(Variant.string("x").objectPath == nil)
        #expect(Variant.bool(true).bool == true)
        #expect(Variant.int32(1).bool == nil)
        #expect(Variant.strings(["a"]).array == [.string("a")])
        #expect(Variant.vardict(["k": .int32(1)]).dictionary == ["k": .variant(.int32(1))])
        #expect(Variant.vardict(["k": .variant(.int32(1))]) == Variant.vardict(["k": .int32(1)]))
        #expect(Variant.tuple([.bool(true)]).tuple == [.bool(true)])
        #expect(Variant.vardict(["k": .int32(1)]).typeString == "a{sv}")
        #expect(Variant.tuple([.int32(1), .strings([])]).typeString == "(ias)")
    }

    @Test func buildingAndReadingDoesNotLeak() {
        let value = Variant.tuple([
            .vardict(["title": .string("A title"), "length": .int64(123), "artists": .strings(["x", "y"]),
                      "track": .objectPath("/org/lector/Track/1")]),
            .array(elementType: "{is}", [.tuple([.int32(1), .string("one")])]),
            .variant(.double(0.5)),
        ])
        func churn(_ times: Int) {
            for _ in 0..<times {
                let gvariant = value.makeGVariant()
                _ = Variant(borrowing: gvariant)
                g_variant_unref(gvariant)
                let floating = value.makeFloatingGVariant()
                g_variant_unref(g_variant_ref_sink(floating))
            }
        }
        churn(10_000)
        // RSS is process-wide and other suites run in parallel, so one round may
        // grow by what they allocate. A leak grows every round; noise does not:
        // pass as soon as one round of 30,000 iterations stays under 1 MiB.
        var growths: [Int] = []
        for _ in 0..<5 {
            let before = residentKiB()
            churn(30_000)
            growths.append(residentKiB() - before)
            if growths.last! < 1_024 { break }
        }
        #expect(growths.contains { $0 < 1_024 }, "RSS grew in every round (KiB): \(growths)")
    }
}
