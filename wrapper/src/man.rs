//! hookcc(1): the manual page, made from `hookcc --help` ([`crate::options::HELP`]) so that the
//! two cannot drift apart. `hookcc --print-man-page` prints it; scripts/hookprof-docs.sh writes
//! it beside hookprof's pages (install.sh, the Debian package).

use crate::options::HELP;

/// Escapes `text` for a roff line: backslashes, hyphens (so that `--trace` is not typeset
/// with typographic dashes), and a leading `.` or `'`, which roff would read as a request.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// The pages SEE ALSO names: hookprof's (written by `hookprof man -o`, beside this one) and
/// clang-19's (Debian's clang-19 package, which hookcc's package depends on).
pub const SEE_ALSO: &[&str] = &["hookprof", "hookprof-report", "clang-19"];

/// hookcc(1) in roff: NAME and SYNOPSIS from the first lines of [`HELP`], the rest of it as
/// the DESCRIPTION, kept as `--help` lays it out; then SEE ALSO.
pub fn man_page() -> String {
    let mut lines = HELP.lines();
    let title = lines.next().unwrap_or_default();
    let summary = title.split_once(" — ").map_or(title, |(_, s)| s);
    let mut page = format!(
        ".TH HOOKCC 1 \"\" \"hookcc {}\" \"User Commands\"\n.SH NAME\nhookcc, hookcc++ \\- {}\n",
        env!("CARGO_PKG_VERSION"),
        roff(summary)
    );
    page.push_str(".SH SYNOPSIS\n.nf\n");
    let mut body = lines.skip_while(|l| l.trim().is_empty()).peekable();
    // The usage lines, up to the first blank line.
    while let Some(line) = body.next_if(|l| !l.trim().is_empty()) {
        let line = line.strip_prefix("Usage: ").unwrap_or(line).trim_start();
        page.push_str(&roff(line));
        page.push('\n');
    }
    page.push_str(".fi\n.SH DESCRIPTION\n.nf\n");
    for line in body.skip_while(|l| l.trim().is_empty()) {
        page.push_str(&roff(line));
        page.push('\n');
    }
    page.push_str(".fi\n.SH \"SEE ALSO\"\n");
    let refs: Vec<String> = SEE_ALSO
        .iter()
        .map(|name| format!(".BR {} (1)", roff(name)))
        .collect();
    page.push_str(&refs.join(",\n"));
    page.push('\n');
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_the_help_text_in_roff() {
        let page = man_page();
        assert!(page.starts_with(".TH HOOKCC 1 "), "{page}");
        assert!(page.contains(".SH NAME\nhookcc, hookcc++ \\- a drop\\-in C/C++ compiler"));
        assert!(
            page.contains(".SH SYNOPSIS\n.nf\nhookcc [hookcc options] [clang options] files…\n")
        );
        // Every option of --help is in it, as roff spells it.
        for option in [
            "--trace",
            "--hook-placement=",
            "--rustflags",
            "--version",
            "HOOKCC_CLANG",
        ] {
            assert!(page.contains(&roff(option)), "{option}");
        }
        // No line a roff request could be taken for, but the page's own.
        for line in page.lines() {
            if let Some(request) = line.strip_prefix('.') {
                let name = request.split_whitespace().next().unwrap_or("");
                assert!(["TH", "SH", "nf", "fi", "BR"].contains(&name), "{line}");
            }
        }
        assert!(
            page.ends_with(".BR hookprof (1),\n.BR hookprof\\-report (1),\n.BR clang\\-19 (1)\n")
        );
    }
}
