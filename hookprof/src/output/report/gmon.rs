//! `hookprof gmon`: a `gmon.out` that GNU `gprof ELF gmon.out` reads (binutils' format,
//! gmon_out.h: the "gmon" header, version 1, then tagged records), for the executable's
//! functions:
//!
//! - one call-graph arc record (tag 1) per caller→callee pair with its call count; the
//!   trace has no call sites, so `from_pc` is the caller's entry point, which gprof maps to
//!   the caller just the same;
//! - one histogram record (tag 0) synthesized from exclusive times: the time of each
//!   function goes in the 2-byte bin at its entry point, in ticks of a sampling rate chosen
//!   so that the largest function's time fits a 16-bit bin (gprof's "each sample counts as"
//!   line shows it). gprof's "self seconds" are these exclusive times, rounded to the rate.
//!
//! Addresses are written as the ELF file has them (run-time address minus the module's load
//! bias). Functions of shared libraries are left out: gprof reads one executable. Arcs from
//! the bottom of a stack (no caller) are left out too; gprof shows `<spontaneous>` for them.
//! All threads together; the view filters do not apply.

use std::io::{self, Write};

use crate::analysis::model::Profile;
use crate::input::format::Endian;

/// What the gmon.out needs to know about the target.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub endian: Endian,
    /// 4 or 8.
    pub pointer_size: u8,
    /// Run-time address = ELF address + bias, for the executable's module.
    pub bias: u64,
    /// The executable's run-time address range.
    pub start: u64,
    pub end: u64,
    pub ticks_per_second: u64,
}

/// Bytes of code per histogram bin.
const BIN_BYTES: u64 = 2;

/// Writes the gmon.out of `profile`'s executable functions. Returns the sampling rate used.
/// `function` gives the address of the function an ELF address names (its record's function,
/// where the native trace's hooks passed records:
/// [`crate::input::records::FunctionRecords`]).
pub fn write(
    profile: &Profile,
    target: &Target,
    function: &dyn Fn(u64) -> u64,
    out: &mut dyn Write,
) -> io::Result<u32> {
    let inside = |a: u64| target.start <= a && a < target.end;
    let elf = |a: u64| function(a.wrapping_sub(target.bias));
    let functions = profile.merged();
    let mut own: Vec<(u64, u64)> = functions
        .functions
        .iter()
        .filter(|(&a, s)| inside(a) && s.calls > 0)
        .map(|(&a, s)| (elf(a), s.exclusive_ticks))
        .collect();
    own.sort_unstable();
    let mut arcs: Vec<(u64, u64, u64)> = functions
        .arcs
        .iter()
        .filter_map(|(arc, stats)| {
            let caller = arc.caller?;
            (inside(caller) && inside(arc.callee))
                .then(|| (elf(caller), elf(arc.callee), stats.calls))
        })
        .collect();
    arcs.sort_unstable();

    // The rate: as fine as the trace's clock, coarse enough for the largest time to fit.
    let tps = target.ticks_per_second.max(1);
    let largest = own.iter().map(|&(_, t)| t).max().unwrap_or(0);
    let rate = if largest == 0 {
        1_000_000
    } else {
        let fit = (u128::from(u16::MAX) * u128::from(tps) / u128::from(largest)).max(1);
        fit.min(u128::from(tps)).min(u128::from(u32::MAX)) as u32
    };

    let mut buf = Vec::new();
    buf.extend_from_slice(b"gmon");
    put32(&mut buf, target.endian, 1);
    buf.extend_from_slice(&[0; 12]);

    if let (Some(&(low, _)), Some(&(high, _))) = (own.first(), own.last()) {
        let low = low & !(BIN_BYTES - 1);
        let high = (high + BIN_BYTES) & !(BIN_BYTES - 1);
        let bins = ((high - low) / BIN_BYTES) as usize;
        let mut histogram = vec![0u16; bins];
        for &(address, ticks) in &own {
            let samples =
                (u128::from(ticks) * u128::from(rate) + u128::from(tps) / 2) / u128::from(tps);
            let bin = ((address - low) / BIN_BYTES) as usize;
            histogram[bin] = histogram[bin].saturating_add(samples.min(65535) as u16);
        }
        buf.push(0); // GMON_TAG_TIME_HIST
        put_address(&mut buf, target, low);
        put_address(&mut buf, target, high);
        put32(&mut buf, target.endian, bins as u32);
        put32(&mut buf, target.endian, rate);
        let mut dimen = [0u8; 15];
        dimen[..7].copy_from_slice(b"seconds");
        buf.extend_from_slice(&dimen);
        buf.push(b's');
        for bin in histogram {
            match target.endian {
                Endian::Little => buf.extend_from_slice(&bin.to_le_bytes()),
                Endian::Big => buf.extend_from_slice(&bin.to_be_bytes()),
            }
        }
    }
    for (from, to, calls) in arcs {
        buf.push(1); // GMON_TAG_CG_ARC
        put_address(&mut buf, target, from);
        put_address(&mut buf, target, to);
        put32(
            &mut buf,
            target.endian,
            calls.min(u64::from(u32::MAX)) as u32,
        );
    }
    out.write_all(&buf)?;
    Ok(rate)
}

fn put32(buf: &mut Vec<u8>, endian: Endian, v: u32) {
    match endian {
        Endian::Little => buf.extend_from_slice(&v.to_le_bytes()),
        Endian::Big => buf.extend_from_slice(&v.to_be_bytes()),
    }
}

fn put_address(buf: &mut Vec<u8>, target: &Target, v: u64) {
    if target.pointer_size == 4 {
        put32(buf, target.endian, v as u32);
    } else {
        match target.endian {
            Endian::Little => buf.extend_from_slice(&v.to_le_bytes()),
            Endian::Big => buf.extend_from_slice(&v.to_be_bytes()),
        }
    }
}
