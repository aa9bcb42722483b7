@preconcurrency import Glibc
import CCmark

/// CommonMark rendering with libcmark (cmark(3)).
public enum Markdown {
    /// `markdown` rendered as an HTML fragment (`cmark_markdown_to_html` with smart punctuation; raw HTML and
    /// unsafe links are left out, as libcmark does without CMARK_OPT_UNSAFE), in UTF-8.
    public static func html(_ markdown: String) -> String {
        var source = markdown
        return source.withUTF8 { bytes in
            guard let base = bytes.baseAddress,
                  let rendered = base.withMemoryRebound(to: CChar.self, capacity: bytes.count, {
                      cmark_markdown_to_html($0, bytes.count, CMARK_OPT_SMART)
                  }) else { return "" }
            defer { free(rendered) }
            return String(cString: rendered)
        }
    }
}
