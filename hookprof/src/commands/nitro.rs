//! `hookprof nitro`: a NITRO buffer dump decoded into the text the program prints.

use std::path::Path;

use crate::commands::arguments::parse_hex;
use crate::input::error::NitroError as Error;
use crate::input::nitro::Dump;
use crate::input::nitro_program::ProgramImage;
use crate::output::nitro::{render, Decoded, Options};
use std::path::PathBuf;

/// Decodes the dump at `dump_path` with names from the ELF file `exe`.
pub fn decode_file(dump_path: &Path, exe: &Path, options: &Options) -> Result<Decoded, Error> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|error| Error::Io {
            path: path.to_path_buf(),
            error,
        })
    };
    let dump_error = |error| Error::Dump {
        path: dump_path.to_path_buf(),
        error,
    };
    let data = crate::input::read::read_nitro_dump(dump_path)?;
    let dump = Dump::parse(&data).map_err(dump_error)?;
    let elf = read(exe)?;
    let mut image = ProgramImage::new(&elf, &dump.header).map_err(|error| Error::Elf {
        path: exe.to_path_buf(),
        error,
    })?;
    let mut decoded = render(&dump, &image, options);
    let mut warnings = image.take_warnings();
    warnings.append(&mut decoded.warnings);
    decoded.warnings = warnings;
    Ok(decoded)
}

#[derive(clap::Args, Debug)]
pub struct NitroArgs {
    /// The raw bytes of the buffer, from its start (the address given to OS_Init*).
    pub dump: PathBuf,
    /// The program's ELF file (the build that filled the buffer): names are read from it.
    #[arg(long, value_name = "ELF")]
    pub exe: PathBuf,
    /// The lr for the first line of a call trace (hex, with or without 0x).
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    pub lr: Option<u64>,
    /// A measurement buffer's costs include the calls each call made (default: they do not,
    /// as the seed's §4.1 counts them; a statistics buffer says for itself).
    #[arg(long)]
    pub inclusive: bool,
    /// Write the text to FILE instead of standard output (never the input dump).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `hookprof nitro --help`'s text after the options.
pub const NITRO_AFTER_HELP: &str = "\
The first line of a call trace, OS_DumpCallTrace: lr=..., shows where the program called
OS_DumpCallTrace, which the buffer does not hold: give it with --lr, else it reads lr=????????.
See docs/nitro.md, \"Decoding a dump with hookprof nitro\".";
