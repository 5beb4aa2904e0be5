//! What `hookprof gprof` writes: the gmon.out of a dump of hookcc's gprof data
//! (docs/gprof.md).

use crate::input::format::Endian;
use crate::input::gprof::Data;

impl Data {
    /// The gmon.out GNU gprof reads: the "gmon" header (version 1), the histogram record, one
    /// record per arc with calls; addresses as the ELF file has them, words of the target's
    /// pointer size and byte order (as runtime/src/gprof.c writes it on a hosted target).
    pub fn gmon(&self, pointer_size: usize, endian: Endian) -> Vec<u8> {
        let mut out = Vec::new();
        let word = |out: &mut Vec<u8>, value: u64, size: usize| {
            let bytes = value.to_be_bytes();
            let mut w = bytes[8 - size..].to_vec();
            if endian == Endian::Little {
                w.reverse();
            }
            out.extend(w);
        };
        out.extend_from_slice(b"gmon");
        word(&mut out, 1, 4);
        out.extend_from_slice(&[0; 12]);
        out.push(0); // GMON_TAG_TIME_HIST
        word(
            &mut out,
            self.low_pc.wrapping_sub(self.load_bias),
            pointer_size,
        );
        word(
            &mut out,
            self.high_pc.wrapping_sub(self.load_bias),
            pointer_size,
        );
        word(&mut out, self.histogram.len() as u64, 4);
        let rate = if self.interval_us > 0 {
            1_000_000 / u64::from(self.interval_us)
        } else {
            0
        };
        word(&mut out, rate, 4);
        out.extend_from_slice(b"seconds\0\0\0\0\0\0\0\0s");
        for &count in &self.histogram {
            word(&mut out, u64::from(count), 2);
        }
        if self.callgraph {
            for arc in self.arcs.iter().filter(|a| a.count > 0) {
                out.push(1); // GMON_TAG_CG_ARC
                word(
                    &mut out,
                    arc.from_pc.wrapping_sub(self.load_bias),
                    pointer_size,
                );
                word(
                    &mut out,
                    arc.self_pc.wrapping_sub(self.load_bias),
                    pointer_size,
                );
                word(&mut out, u64::from(arc.count), 4);
            }
        }
        out
    }
}
