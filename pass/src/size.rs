//! `--hook-min-size=N`, as XRay's `-fxray-instruction-threshold=N`: small functions cost more
//! in hooks than they do themselves, and a profile rarely needs them.
//!
//! May import: nothing of this crate (instrument calls [`too_small`] and [`instructions`]).

use inkwell::values::{FunctionValue, InstructionOpcode, Operand};

/// True if `function` has fewer than `min` IR instructions (counted where the pass runs: before
/// inlining, at the start of the pipeline, or after it with the after-inlining placements) and
/// no loop. A loop is a branch back to its own block or an earlier one: in the order clang and
/// rustc lay blocks out, every loop has one, so a small function that loops (and may run long)
/// keeps its hooks.
pub fn too_small(function: FunctionValue<'_>, min: u32) -> bool {
    if instructions(function) >= min as usize {
        return false;
    }
    let blocks: Vec<_> = function.get_basic_block_iter().collect();
    for (index, block) in blocks.iter().enumerate() {
        let Some(terminator) = block.get_terminator() else {
            continue;
        };
        if !matches!(
            terminator.get_opcode(),
            InstructionOpcode::Br | InstructionOpcode::Switch | InstructionOpcode::IndirectBr
        ) {
            continue;
        }
        for operand in 0..terminator.get_num_operands() {
            if let Some(Operand::Block(target)) = terminator.get_operand(operand) {
                if blocks[..=index].contains(&target) {
                    return false;
                }
            }
        }
    }
    true
}

/// The IR instructions of `function` (also `--hook-outline=N`'s measure).
pub fn instructions(function: FunctionValue<'_>) -> usize {
    function
        .get_basic_block_iter()
        .map(|b| b.get_instructions().count())
        .sum()
}
