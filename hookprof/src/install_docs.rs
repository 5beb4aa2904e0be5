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

pub fn man(args: &ManArgs, command: clap::Command) -> Result<()> {
    let Some(dir) = &args.output else {
        let mut out = std::io::stdout().lock();
        clap_mangen::Man::new(command).render(&mut out)?;
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
        let mut text = Vec::new();
        clap_mangen::Man::new(page).render(&mut text)?;
        hookprof::output::file::write_file(&path, None, &text)?;
    }
    Ok(())
}
