//! `hookprof ti` and `hookprof callgraph` of a TI dump: read, replay, write.

use std::path::{Path, PathBuf};

use crate::analysis::ti::{analyse, analyse_file, Analysed, Analysis, Bias, Options};
use crate::input::error::TiError as Error;
use crate::input::ti::{Dump, LayoutChoice};
use crate::input::ti_program::Program;
use crate::output::ti::callgraph;

/// A dump read, replayed and rendered.
#[derive(Clone, Debug)]
pub struct Processed {
    pub dump: Dump,
    /// How the dump's record layout was chosen.
    pub layout_choice: LayoutChoice,
    pub bias: (u64, Bias),
    pub analysis: Analysis,
    pub call_list: Vec<u8>,
    pub profile: Vec<u8>,
    pub warnings: Vec<String>,
}

/// Reads, replays and renders the dump at `dump_path`.
pub fn process_file(dump_path: &Path, options: &Options) -> Result<Processed, Error> {
    Ok(render(analyse_file(dump_path, options)?))
}

/// Replays and renders `dump`.
pub fn process(dump: Dump, program: &Program, profile_data: Option<u64>) -> Processed {
    render(analyse(dump, program, profile_data))
}

/// The two CSV files of an analysed dump.
fn render(analysed: Analysed) -> Processed {
    let Analysed {
        dump,
        layout_choice,
        bias,
        analysis,
        warnings,
    } = analysed;
    let mut call_list = Vec::new();
    analysis
        .write_call_list(&mut call_list)
        .expect("writing to a Vec cannot fail");
    let mut profile = Vec::new();
    analysis
        .write_profile(&mut profile)
        .expect("writing to a Vec cannot fail");
    Processed {
        dump,
        layout_choice,
        bias,
        analysis,
        call_list,
        profile,
        warnings,
    }
}

impl Processed {
    /// The status report: what the seed's tool shows in its status window.
    pub fn status(&self) -> String {
        crate::output::ti::status(&self.dump, &self.layout_choice, &self.bias, &self.analysis)
    }

    /// Writes `PREFIX_call_list.csv` and `PREFIX_profile.csv`, never over `input`; returns
    /// their paths.
    pub fn write_files(&self, prefix: &Path, input: &Path) -> Result<[PathBuf; 2], Error> {
        let path = |suffix: &str| {
            let mut p = prefix.as_os_str().to_owned();
            p.push(suffix);
            PathBuf::from(p)
        };
        let files = [path("_call_list.csv"), path("_profile.csv")];
        for f in &files {
            if crate::output::file::same_file(input, f) {
                return Err(Error::OutputIsInput { path: f.clone() });
            }
        }
        for (f, bytes) in files.iter().zip([&self.call_list, &self.profile]) {
            crate::output::file::write_file(f, Some(input), bytes)
                .map_err(|error| Error::Output(Box::new(error)))?;
        }
        Ok(files)
    }
}

/// The default output prefix: the dump's path without its extension.
pub fn default_prefix(dump: &Path) -> PathBuf {
    dump.with_extension("")
}

/// The Dynamic Call Graph of a TI dump, one section per task. Returns the text and the
/// warnings to show.
pub fn callgraph_file(
    dump_path: &Path,
    options: &Options,
) -> Result<(Vec<u8>, Vec<String>), Error> {
    let processed = process_file(dump_path, options)?;
    Ok((callgraph(&processed.analysis), processed.warnings))
}
