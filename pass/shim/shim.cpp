// The C++ side of the hookcc pass plugin: what the LLVM C API cannot express.
//
// LLVM's new pass manager is C++ only, so this file registers the pass with the PassBuilder,
// declares the -hookcc-* command-line options, and forwards each module to the Rust code
// (hookcc_instrument_module) that does the actual instrumentation through the C API.
// llvmGetPassPluginInfo itself is defined in Rust (a symbol only in this static library is not
// exported from a Rust cdylib), and returns hookcc_plugin_info() below.

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm-c/Core.h"

#include <cstdlib>
#include <string>

using namespace llvm;

namespace {

// Options reach the pass as -mllvm -hookcc-…; clang-19 parses -mllvm before it loads
// -fpass-plugin libraries, so the driver also passes this library as -fplugin=, which loads it
// early enough for these cl::opts to be registered (see shared/DESIGN.md).
cl::OptionCategory HookccCategory("hookcc options");

cl::opt<std::string> EntryHook("hookcc-entry", cl::desc("name of the entry hook to call"),
                               cl::value_desc("symbol"), cl::cat(HookccCategory));
cl::opt<std::string> ExitHook("hookcc-exit", cl::desc("name of the exit hook to call"),
                              cl::value_desc("symbol"), cl::cat(HookccCategory));
cl::opt<std::string>
    EntryParm("hookcc-entry-parm",
              cl::desc("what the entry hook receives: none, name, address, exit-address, name-callsite-args, callsite-address, address-callsite"),
              cl::init("none"), cl::cat(HookccCategory));
cl::opt<std::string>
    ExitParm("hookcc-exit-parm",
             cl::desc("what the exit hook receives: none, name, address, exit-address, name-callsite-args, callsite-address, address-callsite"),
             cl::init("none"), cl::cat(HookccCategory));
cl::opt<bool> AfterInlining("hookcc-after-inlining",
                            cl::desc("insert hooks after inlining (inlined bodies get none)"),
                            cl::init(false), cl::cat(HookccCategory));

cl::opt<bool> DefaultOff("hookcc-default-off",
                         cl::desc("only functions marked hookcc:on (#pragma profile on) get hooks"),
                         cl::init(false), cl::cat(HookccCategory));
cl::opt<bool> SkipInline("hookcc-skip-inline",
                         cl::desc("no hooks in functions declared inline (TI)"), cl::init(false),
                         cl::cat(HookccCategory));

// Mirrors `RawConfig` in src/ffi.rs field for field.
struct RawConfig {
  const char *entry_hook;
  const char *exit_hook;
  const char *entry_parm;
  const char *exit_parm;
  unsigned after_inlining;
  unsigned default_off;
  unsigned skip_inline;
};

enum Phase : unsigned { PhaseStart = 0, PhaseOptimizerLast = 1, PhaseExplicit = 2 };

} // namespace

extern "C" {
// Defined in Rust (src/ffi.rs). Returns 1 if the module changed; on failure returns -1 and
// sets *error to a message allocated by Rust, freed with hookcc_free_error.
int hookcc_instrument_module(LLVMModuleRef module, unsigned phase, const RawConfig *config,
                             char **error);
void hookcc_free_error(char *error);
}

namespace {

struct HookccPass : PassInfoMixin<HookccPass> {
  Phase phase;
  explicit HookccPass(Phase p) : phase(p) {}

  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    RawConfig config{EntryHook.c_str(), ExitHook.c_str(), EntryParm.c_str(), ExitParm.c_str(),
                     AfterInlining ? 1u : 0u, DefaultOff ? 1u : 0u, SkipInline ? 1u : 0u};
    char *error = nullptr;
    int changed = hookcc_instrument_module(wrap(&M), phase, &config, &error);
    if (changed < 0) {
      // A diagnostic, not an abort: clang prints "error: hookcc: …" and fails the compile.
      M.getContext().emitError(Twine("hookcc: ") + (error ? error : "unknown error"));
      hookcc_free_error(error);
      return PreservedAnalyses::all();
    }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }

  // Hooks are inserted even into optnone functions (-O0): the pass is not an optimization.
  static bool isRequired() { return true; }
};

void registerCallbacks(PassBuilder &PB) {
  PB.registerPipelineStartEPCallback([](ModulePassManager &MPM, OptimizationLevel) {
    MPM.addPass(HookccPass(PhaseStart));
  });
  // Runs at every level, -O0 included (checked with clang-19), so after-inlining mode needs no
  // special case for -O0.
  PB.registerOptimizerLastEPCallback([](ModulePassManager &MPM, OptimizationLevel) {
    MPM.addPass(HookccPass(PhaseOptimizerLast));
  });
  // For opt-19 -passes=hookcc (IR tests): runs whatever the options say, once.
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
        if (Name == "hookcc") {
          MPM.addPass(HookccPass(PhaseExplicit));
          return true;
        }
        return false;
      });
}

} // namespace

// Turns a call into an invoke that unwinds to `unwind`, splitting its block: the C API has no
// equivalent, and LLVM's helper keeps operand bundles, attributes and PHI nodes right.
extern "C" void hookcc_call_to_invoke(LLVMValueRef call, LLVMBasicBlockRef unwind) {
  changeToInvokeAndSplitBasicBlock(cast<CallInst>(unwrap(call)), unwrap(unwind));
}

// The block that starts with `inst`: its own if it starts one (and is not the entry block, whose
// address cannot be taken), else a new one split off before it.
extern "C" LLVMBasicBlockRef hookcc_block_starting_at(LLVMValueRef inst) {
  Instruction *I = cast<Instruction>(unwrap(inst));
  BasicBlock *BB = I->getParent();
  if (&BB->front() == I && !BB->isEntryBlock())
    return wrap(BB);
  return wrap(BB->splitBasicBlock(I, "hookcc.frame"));
}

extern "C" PassPluginLibraryInfo hookcc_plugin_info() {
  return {LLVM_PLUGIN_API_VERSION, "hookcc", "0.1.0", registerCallbacks};
}
