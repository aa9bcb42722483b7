@preconcurrency import Glibc
import CCmarkGFM

/// Markdown as people write it, rendered with cmark-gfm (GitHub Flavored Markdown spec 0.29; cmark-gfm(3)):
/// CommonMark with GitHub's tables, task lists, strikethrough, autolinks and footnotes, after its YAML front
/// matter (`FrontMatter`) is taken off.
public enum Markdown {
    /// A Markdown document: its body as HTML and what its front matter says.
    public struct Document: Sendable {
        /// The body rendered as an HTML fragment, in UTF-8.
        public var html: String
        /// The front matter's fields Lector uses; empty without front matter.
        public var metadata: FrontMatter
    }

    /// cmark-gfm's extensions used: GFM's tables, task list items, strikethrough and autolinks. Not
    /// `tagfilter`, which escapes `<script>` and the like so that they would be read as text: the HTML goes
    /// to Lector's HTML reader, which skips them, and is never shown in a browser.
    static let extensions = ["table", "tasklist", "strikethrough", "autolink"]

    /// `markdown` without its front matter, rendered to HTML (`CMARK_OPT_SMART` for typographic quotes and
    /// dashes, `CMARK_OPT_FOOTNOTES` for `[^1]` notes, collected at the end; `CMARK_OPT_UNSAFE`, so raw HTML
    /// blocks keep their text for the HTML reader, which drops scripts, forms and the like).
    public static func document(_ markdown: String) -> Document {
        let (metadata, body) = FrontMatter.split(markdown)
        return Document(html: html(body), metadata: metadata)
    }

    /// `markdown` (with no front matter) rendered as an HTML fragment, as `document` renders the body.
    public static func html(_ markdown: Substring) -> String {
        cmark_gfm_core_extensions_ensure_registered()
        let options = CMARK_OPT_SMART | CMARK_OPT_FOOTNOTES | CMARK_OPT_UNSAFE
        guard let parser = cmark_parser_new(options) else { return "" }
        defer { cmark_parser_free(parser) }
        for name in extensions {
            if let extensionPointer = cmark_find_syntax_extension(name) { cmark_parser_attach_syntax_extension(parser, extensionPointer) }
        }
        var source = String(markdown)
        source.withUTF8 { bytes in
            bytes.baseAddress?.withMemoryRebound(to: CChar.self, capacity: bytes.count) { cmark_parser_feed(parser, $0, bytes.count) }
        }
        guard let root = cmark_parser_finish(parser) else { return "" }
        defer { cmark_node_free(root) }
        guard let rendered = cmark_render_html(root, options, cmark_parser_get_syntax_extensions(parser)) else { return "" }
        defer { free(rendered) }
        return String(cString: rendered)
    }
}
