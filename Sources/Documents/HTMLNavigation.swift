import XMLKit

/// The parts of a web page or a generated manual that a listener does not want read: navigation (ARIA
/// landmarks, the classes and ids that DocBook, Sphinx, Doxygen, gtk-doc, Texinfo and pydoc give their
/// "Prev", "Up", "Next", "Home" bars and breadcrumbs), skip links and cookie banners.
enum HTMLNavigation {
    /// ARIA roles (WAI-ARIA 1.2 landmarks and widgets) that are never the text of a page.
    static let roles: Set<String> = ["navigation", "search", "banner", "contentinfo", "menu", "menubar", "toolbar", "dialog", "alertdialog"]

    /// Class names of navigation and page furniture: DocBook XSL (`navheader`, `navfooter`), Sphinx
    /// (`related`, `sphinxsidebar`, `headerlink`, `footer`), Doxygen (`navpath`, `header`'s `summary`,
    /// `footer`), gtk-doc (`navigation`), Texinfo (`header`, `nav-panel`), pydoc (`heading`'s index links
    /// are in `navigation` cells too), and common site templates (breadcrumbs, navbars, skip links, cookie and
    /// consent banners).
    static let classes: Set<String> = [
        "navheader", "navfooter", "related", "sphinxsidebar", "sphinxsidebarwrapper", "headerlink", "navpath", "nav-path",
        "navigation", "nav-panel", "navbar", "navbar-nav", "nav", "breadcrumb", "breadcrumbs", "skip-link", "skiplink",
        "skip-to-content", "sr-only-focusable", "cookie", "cookies", "cookie-banner", "cookie-notice", "cookie-consent",
        "consent", "consent-banner", "gdpr", "toc-backref", "footer", "navbar-header", "tabs", "tabs2", "tabs3",
    ]

    /// Ids of the same (Doxygen's `titlearea`, `nav-path`, `side-nav`, `MSearchBox`; templates' cookie banners).
    static let ids: Set<String> = [
        "nav-path", "side-nav", "titlearea", "navrow1", "navrow2", "MSearchBox", "MSearchSelectWindow", "cookie-banner",
        "cookie-notice", "cookie-consent", "cookies", "consent", "breadcrumbs", "breadcrumb", "skip-link", "skiplink",
        "navigation", "sidebar",
    ]

    /// Words of a navigation bar's links, lowercased, after `«`, `»`, `<<`, `>>`, arrows and colons are
    /// taken off.
    static let navigationWords: Set<String> = [
        "prev", "previous", "next", "up", "home", "top", "contents", "index", "back", "forward", "toc", "first", "last",
    ]

    /// A navigation block holds at most this many words, and is told within this many nodes (so that telling
    /// stays linear in the document, however deep its markup nests).
    static let maximumWords = 40
    static let maximumNodes = 200

    /// The symbols navigation links are drawn with.
    static let arrows: Set<Character> = ["«", "»", "‹", "›", "←", "→", "↑", "<", ">", "⇐", "⇒", ":", "[", "]", "|", "(", ")"]

    /// Whether `element` (not the article itself) is navigation or furniture, by its role, class or id, or
    /// because it is a skip link or a navigation block (`isNavigationBlock`).
    static func isNavigation(_ element: MarkupElement) -> Bool {
        let a = element.attributes
        if let role = a["role"]?.lowercased(), role.split(separator: " ").contains(where: { roles.contains(String($0)) }) { return true }
        if let cls = a["class"], cls.split(separator: " ").contains(where: { classes.contains($0.lowercased()) }) { return true }
        if let id = a["id"], ids.contains(id) { return true }
        if element.name == "a", isSkipLink(element) { return true }
        if ["p", "div", "table", "tr", "td", "ul", "span"].contains(element.name) { return isNavigationBlock(element) }
        return false
    }

    /// A link within the page whose text says to skip or jump ("Skip to main content", "Jump to navigation").
    static func isSkipLink(_ link: MarkupElement) -> Bool {
        guard link.attributes["href"]?.hasPrefix("#") == true else { return false }
        let words = link.textContent.lowercased().split(whereSeparator: { $0.isWhitespace })
        return words.count <= 6 && (words.first == "skip" || words.first == "jump")
    }

    /// A short block made of links and little else, with at least one navigation word or arrow ("Prev Up
    /// Next", "<< Previous | Contents | Next >>", "Previous: Closure Example, Up: Using libffi [Index]"); images
    /// count by their `alt` ("Prev", "Home"). At most `maximumWords` words, of which at most a quarter outside
    /// links and their labels.
    static func isNavigationBlock(_ element: MarkupElement) -> Bool {
        var linked = 0
        var loose: [Substring] = []
        var navigational = false
        var visited = 0
        var stack: [(MarkupNode, Bool)] = element.children.reversed().map { ($0, false) }
        while let (node, inLink) = stack.popLast() {
            switch node {
            case .text(let t):
                let words = t.split(whereSeparator: { $0.isWhitespace || $0 == "\u{A0}" })
                for word in words {
                    let bare = word.filter { !arrows.contains($0) && $0 != "," && $0 != "." }.lowercased()
                    if navigationWords.contains(bare) || (bare.isEmpty && word.contains(where: { "«»‹›←→<>⇐⇒".contains($0) })) {
                        navigational = true
                        linked += 1
                    } else if bare.isEmpty {
                        continue
                    } else if inLink { linked += 1 } else { loose.append(word) }
                }
            case .element(let e):
                if e.name == "img", let alt = e.attributes["alt"] {
                    if navigationWords.contains(alt.lowercased()) { navigational = true }
                    linked += 1
                    continue
                }
                stack.append(contentsOf: e.children.reversed().map { ($0, inLink || e.name == "a") })
            }
            visited += 1
            if linked + loose.count > maximumWords || visited > maximumNodes { return false }
        }
        return navigational && linked > 0 && loose.count * 4 <= linked + loose.count
    }
}
