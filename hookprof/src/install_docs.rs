//! `hookprof completions SHELL` and `hookprof man`: what a package installs beside the
//! binary, generated from the same clap definition as the options themselves (clap_complete,
//! clap_mangen), so they cannot drift from them.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write hookprof.1 and a page per subcommand (hookprof-report.1, …) into this directory
    /// (created if missing) instead of printing hookprof(1).
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs, mut command: clap::Command) -> Result<()> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut command, "hookprof", &mut out);
    out.flush()?;
    Ok(())
}

/// One page in roff: clap_mangen's, and a SEE ALSO of the pages written beside it.
///
/// The pages have no `help` subcommand: clap adds one, and clap_mangen then listed a
/// `hookprof-help(1)` that no page is (`hookprof help X` is `hookprof X --help`, in X's page).
fn render_page(page: clap::Command, see_also: &[&str]) -> Result<Vec<u8>> {
    let mut text = Vec::new();
    clap_mangen::Man::new(page.disable_help_subcommand(true)).render(&mut text)?;
    let refs: Vec<String> = see_also
        .iter()
        .map(|name| format!(".BR {} (1)", name.replace('-', "\\-")))
        .collect();
    text.extend_from_slice(format!(".SH \"SEE ALSO\"\n{}\n", refs.join(",\n")).as_bytes());
    Ok(text)
}

pub fn man(args: &ManArgs, command: clap::Command) -> Result<()> {
    let Some(dir) = &args.output else {
        let mut out = std::io::stdout().lock();
        out.write_all(&render_page(command, &["hookcc"])?)?;
        return Ok(out.flush()?);
    };
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut pages = vec![("hookprof".to_string(), command.clone())];
    for sub in command.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        // The page's title and usage name the full command (`hookprof report`).
        let name = format!("hookprof-{}", sub.get_name());
        let sub = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("hookprof {}", sub.get_name()));
        pages.push((name, sub));
    }
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        // hookprof(1) lists its subcommands' pages itself; each of those points back to it.
        // hookcc(1) is written beside them (scripts/hookprof-docs.sh).
        let see_also: &[&str] = if name == "hookprof" {
            &["hookcc"]
        } else {
            &["hookprof", "hookcc"]
        };
        let text = render_page(page, see_also)?;
        hookprof::output::file::write_file(&path, None, &text)?;
    }
    Ok(())
}
