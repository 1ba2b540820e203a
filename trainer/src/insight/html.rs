//! Self-contained HTML from the Markdown the reports already write: one file with every image
//! inlined as a data URI (no network access, no script), to open in any browser.

use anyhow::{Context, Result};
use std::path::Path;

use base64::Engine as _;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, html};

/// The page's style: readable tables and images no wider than the window.
const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}th,td{border:1px solid #ccc;padding:4px 8px}\
th{background:#f3f3f3}td{text-align:right}td:first-child{text-align:left}\
img{max-width:100%;height:auto;border:1px solid #eee;margin:0.5em 0;vertical-align:top}\
p:has(img+img) img{max-width:49%}code{background:#f5f5f5;padding:0 3px}";

/// A data URI of a local image file (`.svg` or `.png`).
fn data_uri(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mime = match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => anyhow::bail!("{}: not an SVG or PNG image", path.display()),
    };
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// `markdown` as a whole HTML page titled `title`, its relative image links (relative to
/// `base`) replaced by the images' data.
pub fn page(title: &str, markdown: &str, base: &Path) -> Result<String> {
    let mut events = Vec::new();
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        events.push(match event {
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) if !dest_url.contains(':') => Event::Start(Tag::Image {
                link_type,
                dest_url: CowStr::from(data_uri(&base.join(dest_url.as_ref()))?),
                title,
                id,
            }),
            other => other,
        });
    }
    let mut body = String::new();
    html::push_html(&mut body, events.into_iter());
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        super::pictures::escape(title)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlines_images_and_renders_tables() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.svg"),
            "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
        )
        .unwrap();
        let md = "# T\n\n| a | b |\n| --- | ---: |\n| x \\| y | 1 |\n\n![chart](a.svg)\n";
        let html = page("R & D", md, dir.path()).unwrap();
        assert!(html.contains("<title>R &amp; D</title>"));
        assert!(html.contains("<table>") && html.contains("x | y"));
        assert!(html.contains("src=\"data:image/svg+xml;base64,"), "{html}");
        assert!(!html.contains("a.svg"));
        let missing = page("t", "![x](missing.svg)", dir.path()).unwrap_err();
        assert!(missing.to_string().contains("missing.svg"));
    }
}
