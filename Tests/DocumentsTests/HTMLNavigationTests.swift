import Testing
@testable import Documents

/// Navigation of generated manuals and web pages, never read: DocBook, Texinfo, gtk-doc and Sphinx bars,
/// breadcrumbs, skip links, cookie banners; prose that mentions "next" with a link is kept.
@Suite struct HTMLNavigationTests {
    static func text(_ html: String) throws -> String {
        try HTMLImporter.read(Array(html.utf8)).text
    }

    @Test func generatedManualsNavigationIsNotRead() throws {
        let text = try Self.text("""
            <html><body><a class="skip" href="#content">Skip to main content</a>
            <div id="cookie-banner"><p>We use cookies to improve your experience.</p><button>Accept</button></div>
            <div class="navheader"><table><tr><th colspan="3">Chapter 2. Tools</th></tr>
            <tr><td><a accesskey="p" href="ch01.html">Prev</a> </td><th> </th><td> <a accesskey="n" href="ch03.html">Next</a></td></tr></table></div>
            <div class="header"><p>Next: <a href="Types.html" rel="next">Types</a>, Previous: <a href="Intro.html">Introduction</a>,
            Up: <a href="index.html">Top</a> &nbsp; [<a href="Index.html">Index</a>]</p></div>
            <table class="navigation"><tr><td><a href="a.html"><img src="left.png" alt="Prev"></a></td>
            <td><a href="index.html"><img src="home.png" alt="Home"></a></td></tr></table>
            <ol class="breadcrumb"><li><a href="/">Docs</a></li><li><a href="/tools">Tools</a></li></ol>
            <div role="navigation"><p><a href="a.html">&lt;&lt; Lamps</a> | <a href="c.html">Boats &gt;&gt;</a></p></div>
            <h1 id="content">Tools<a class="headerlink" href="#content">¶</a></h1>
            <p>The keeper keeps a hammer. See the <a href="ch03.html">next chapter</a> for the boats.</p>
            <div class="navfooter"><a href="ch01.html">Prev</a> <a href="index.html">Up</a> <a href="ch03.html">Next</a></div>
            </body></html>
            """)
        #expect(text == "Tools\n\nThe keeper keeps a hammer. See the next chapter for the boats.", "\(text)")
    }

    @Test func aLinkOnlyBlockWithoutNavigationWordsIsRead() throws {
        let text = try Self.text("<html><body><p>The keeper wrote.</p><p><a href=\"bash.html\">bash(1)</a>, <a href=\"sh.html\">sh(1)</a></p></body></html>")
        #expect(text.contains("bash(1), sh(1)"), "\(text)")
    }
}
