//! Doc text from `apis/` (and so from imported CRD descriptions) made inert for rustdoc.
//!
//! A CRD description is prose written for `kubectl explain`, not Markdown for rustdoc: an indented
//! YAML example would run as a Rust doc test, a bare ```` ``` ```` fence likewise, `[name]`
//! would be a broken intra-doc link, `<name>` an unclosed HTML tag and a bare URL a warning, and
//! `cargo doc -D warnings` or `cargo test --doc` on the generated api crate would fail. The CRD
//! keeps the text as written; only the Rust doc attributes get this rendering:
//! - fences without a language become ```` ```text ````, so they are shown, not compiled;
//! - outside fences, leading indentation is dropped (no indented code blocks), `[`, `]`, `<`
//!   and `>` are backslash-escaped outside inline code, and `http(s)://` URLs are wrapped in `<>`.

/// The lines, safe for rustdoc.
pub(crate) fn escape(lines: &[String]) -> Vec<String> {
    let mut in_fence = false;
    let mut out: Vec<String> = lines
        .iter()
        .map(|line| {
            let trimmed = line.trim_start();
            if let Some(rest) = trimmed.strip_prefix("```") {
                let opening = !in_fence;
                in_fence = !in_fence;
                return if opening && rest.trim().is_empty() {
                    "```text".to_owned()
                } else {
                    trimmed.to_owned()
                };
            }
            if in_fence {
                line.clone()
            } else {
                inline(trimmed)
            }
        })
        .collect();
    if in_fence {
        out.push("```".to_owned());
    }
    out
}

/// One line outside a fence: escapes outside backtick spans, URLs in angle brackets.
fn inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut in_code = false;
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code && (rest.starts_with("http://") || rest.starts_with("https://")) {
            let end = rest
                .find(|c: char| c.is_whitespace() || "<>\"'`)]".contains(c))
                .unwrap_or(rest.len());
            let url = rest[..end].trim_end_matches(['.', ',', ';', ':']);
            out.push('<');
            out.push_str(url);
            out.push('>');
            rest = &rest[url.len()..];
            continue;
        } else if !in_code && "[]<>".contains(c) {
            out.push('\\');
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn fences_get_a_language_and_indented_code_loses_its_indent() {
        let out = escape(&lines(
            "Example:\n\n    kind: Foo\n```\na: [b]\n```\n```yaml\nx: 1\n```",
        ));
        assert_eq!(
            out,
            lines("Example:\n\nkind: Foo\n```text\na: [b]\n```\n```yaml\nx: 1\n```")
        );
    }

    #[test]
    fn links_tags_and_urls_are_inert_outside_inline_code() {
        let out = escape(&lines(
            "See [RFC 1123] at https://example.com/a_(b). Use `<ns>/[x]` or <ns>/<name>.",
        ));
        assert_eq!(
            out,
            lines(
                "See \\[RFC 1123\\] at <https://example.com/a_(b>). Use `<ns>/[x]` or \\<ns\\>/\\<name\\>."
            )
        );
    }

    #[test]
    fn an_unclosed_fence_is_closed() {
        assert_eq!(escape(&lines("```\ncode")), lines("```text\ncode\n```"));
    }
}
