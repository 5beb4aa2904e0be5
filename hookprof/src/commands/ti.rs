//! `hookprof ti` and `hookprof callgraph` of a TI dump: read, replay, write.

use std::path::{Path, PathBuf};

use crate::commands::arguments::parse_hex;
use crate::input::error::TiError as Error;
use crate::input::ti::{Dump, LayoutChoice};
use crate::input::ti_calls::{analyse, analyse_file, Analysed, Analysis, Bias, Options};
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

#[derive(clap::Args, Debug)]
pub struct TiArgs {
    /// The TI dump: binary or CCS hex.
    pub dump: PathBuf,
    /// The program's ELF file (the build that wrote the dump).
    #[arg(long, value_name = "ELF")]
    pub exe: PathBuf,
    /// Names from all symbols (static functions and objects too), not only global ones.
    #[arg(long)]
    pub all_symbols: bool,
    /// Words per record: 4 (hookcc's TI runtime on a 64-bit target: 64-bit address, TSCL,
    /// TSCH) or 3 (32-bit address: 32-bit targets, and the seed's own hook.c anywhere).
    /// Default: a 32-bit program's dump has 3; a 64-bit program's is read both ways and the
    /// layout whose timestamps run in order is used (an error if the dump cannot tell).
    #[arg(long, value_name = "3|4", value_parser = clap::value_parser!(u8).range(3..=4))]
    pub record_words: Option<u8>,
    /// Output prefix (default: DUMP without its extension).
    #[arg(long, value_name = "PREFIX")]
    pub out: Option<PathBuf>,
    /// The run-time address of ProfileData (hex), for a binary dump of a position-independent
    /// executable (HOOKCC_TI_VERBOSE=1 prints it); else the load bias is inferred.
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    pub profile_data: Option<u64>,
}

/// `hookprof ti --help`'s text after the options: the files it writes.
pub const TI_AFTER_HELP: &str = "\
PREFIX_call_list.csv: Function,EnterTSC,ExitTSC,InclusiveCycles,ExclusiveCycles,Task,Depth
  one line per completed call, in order of completion (exit)
PREFIX_profile.csv: FirstTSC/LastTSC/TotalCycles; Functions ValidCycles and Valid/Total %;
  per function ExecuteTimes,TotalExcluCycle,AverageExcluCycle,MaxExcluCycle,MinExcluCycle,
  AverageIncluCycle,MaxIncluCycle,Percentage, by total exclusive cycles; then the tasks.
Cycles are the dump's timestamp ticks; a task's time switched out is not counted in the
calls it had in progress. See docs/ti-post.md.";
