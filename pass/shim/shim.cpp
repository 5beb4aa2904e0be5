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
#include "llvm/Config/llvm-config.h"
// LLVM 22 moved the plugin interface to llvm/Plugins/.
#if LLVM_VERSION_MAJOR >= 22
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm-c/Core.h"

#include <cstdlib>
#include <mutex>
#include <optional>
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
                            cl::desc("insert hooks after inlining (inlined bodies get none); "
                                     "the same as -hookcc-placement=after-inlining"),
                            cl::init(false), cl::cat(HookccCategory));
cl::opt<std::string>
    PlacementOption("hookcc-placement",
                    cl::desc("when hooks go in: source (start of the pipeline), after-inlining "
                             "(end of the optimizer), auto (source at -O0, else after inlining)"),
                    cl::init("source"), cl::cat(HookccCategory));

cl::opt<bool> DefaultOff("hookcc-default-off",
                         cl::desc("only functions marked hookcc:on (#pragma profile on) get hooks"),
                         cl::init(false), cl::cat(HookccCategory));
cl::opt<bool> SkipInline("hookcc-skip-inline",
                         cl::desc("no hooks in functions declared inline (TI)"), cl::init(false),
                         cl::cat(HookccCategory));

cl::list<std::string> Include("hookcc-include",
                              cl::desc("only functions whose name matches one of these globs"),
                              cl::value_desc("glob"), cl::cat(HookccCategory));
cl::opt<unsigned> MinSize("hookcc-min-size",
                          cl::desc("no hooks in functions of fewer IR instructions, unless they loop"),
                          cl::init(0), cl::cat(HookccCategory));
cl::opt<std::string>
    OutlineOption("hookcc-outline",
                  cl::desc("which functions have their switched hooks in an outlined clone: "
                           "auto (200 on a hosted target, leaf on bare metal), leaf (calls "
                           "nothing but tail calls), all, none, or N (leaf ones and those of "
                           "at most N IR instructions)"),
                  cl::init("auto"), cl::cat(HookccCategory));
cl::list<std::string> ExcludeCrate("hookcc-exclude-crate",
                                   cl::desc("no hooks in Rust functions defined in this crate"),
                                   cl::value_desc("crate"), cl::cat(HookccCategory));
cl::list<std::string> Exclude("hookcc-exclude",
                              cl::desc("no hooks in functions whose name matches this glob"),
                              cl::value_desc("glob"), cl::cat(HookccCategory));

// Mirrors `RawConfig` in src/plugin.rs field for field.
struct RawConfig {
  const char *entry_hook;
  const char *exit_hook;
  const char *entry_parm;
  const char *exit_parm;
  unsigned after_inlining;
  unsigned default_off;
  unsigned skip_inline;
  const char *include; // newline-separated globs
  const char *exclude;
  unsigned min_size;
  const char *exclude_crates; // newline-separated
  const char *outline;
};

enum Phase : unsigned { PhaseStart = 0, PhaseOptimizerLast = 1, PhaseExplicit = 2 };

// The same options, as a pipeline element: `hookcc-options<entry=SYM;entry-parm=KIND;…>`.
// rustc loads `-Z llvm-plugins=` only when it builds a pass pipeline, after it has parsed
// `-C llvm-args=`, so the cl::opts above cannot be set from rustc (checked with rustc 1.95.0:
// they are unknown arguments there). `-C passes=hookcc-options<…>` is parsed into the same
// pipeline before it runs: the element adds no pass, it sets what the HookccPass instances read
// when they run. Keys are the cl::opt names without `hookcc-`; flags take no value; include
// and exclude repeat.
struct Settings {
  std::string entry_hook, exit_hook, entry_parm = "none", exit_parm = "none";
  std::string placement = "source"; // source, after-inlining or auto
  bool default_off = false, skip_inline = false;
  std::string include, exclude; // newline-separated globs
  unsigned min_size = 0;
  std::string exclude_crates; // newline-separated
  std::string outline = "auto";
};
std::mutex SettingsMutex; // rustc optimizes codegen units on several threads
std::optional<Settings> PipelineSettings;

Settings currentSettings() {
  std::lock_guard<std::mutex> lock(SettingsMutex);
  if (PipelineSettings)
    return *PipelineSettings;
  Settings s;
  s.entry_hook = EntryHook;
  s.exit_hook = ExitHook;
  s.entry_parm = EntryParm;
  s.exit_parm = ExitParm;
  s.placement = AfterInlining ? std::string("after-inlining") : PlacementOption.getValue();
  s.default_off = DefaultOff;
  s.skip_inline = SkipInline;
  for (const std::string &glob : Include)
    s.include += glob + "\n";
  for (const std::string &glob : Exclude)
    s.exclude += glob + "\n";
  s.min_size = MinSize;
  for (const std::string &name : ExcludeCrate)
    s.exclude_crates += name + "\n";
  s.outline = OutlineOption;
  return s;
}

// Parses the text between the angle brackets; on an unknown key, says so on stderr (rustc
// then reports the pipeline element as unknown) and returns false.
bool parseSettings(StringRef params) {
  Settings s;
  SmallVector<StringRef, 8> items;
  params.split(items, ';', -1, false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    if (key == "entry") s.entry_hook = value.str();
    else if (key == "exit") s.exit_hook = value.str();
    else if (key == "entry-parm") s.entry_parm = value.str();
    else if (key == "exit-parm") s.exit_parm = value.str();
    else if (key == "after-inlining") s.placement = "after-inlining";
    else if (key == "placement") {
      if (value != "source" && value != "after-inlining" && value != "auto") {
        errs() << "hookcc: placement=" << value << " in hookcc-options<" << params
               << "> (expected source, after-inlining or auto)\n";
        return false;
      }
      s.placement = value.str();
    }
    else if (key == "default-off") s.default_off = true;
    else if (key == "skip-inline") s.skip_inline = true;
    else if (key == "include") s.include += value.str() + "\n";
    else if (key == "exclude") s.exclude += value.str() + "\n";
    else if (key == "exclude-crate") s.exclude_crates += value.str() + "\n";
    else if (key == "outline") s.outline = value.str();
    else if (key == "min-size") {
      if (value.getAsInteger(10, s.min_size)) {
        errs() << "hookcc: min-size=" << value << " in hookcc-options<" << params
               << "> is not a number\n";
        return false;
      }
    } else {
      errs() << "hookcc: unknown key `" << key << "` in hookcc-options<" << params
             << "> (expected entry, exit, entry-parm, exit-parm, placement, after-inlining, "
                "default-off, skip-inline, include, exclude, exclude-crate, min-size, outline)\n";
      return false;
    }
  }
  std::lock_guard<std::mutex> lock(SettingsMutex);
  PipelineSettings = s;
  return true;
}

} // namespace

extern "C" {
// Defined in Rust (src/plugin.rs). Returns 1 if the module changed; on failure returns -1 and
// sets *error to a message allocated by Rust, freed with hookcc_free_error.
int hookcc_instrument_module(LLVMModuleRef module, unsigned phase, const RawConfig *config,
                             char **error);
void hookcc_free_error(char *error);
}

namespace {

struct HookccPass : PassInfoMixin<HookccPass> {
  Phase phase;
  // The pipeline optimizes (-O1 and above, -Os, -Oz): `auto` then places hooks after inlining.
  bool optimizing;
  // The first half of a ThinLTO build (LLVM 20 and later say so): the functions are inlined
  // across modules only in the second, whose OptimizerLast comes again.
  bool thin_lto_prelink;
  HookccPass(Phase p, OptimizationLevel level, bool prelink = false)
      : phase(p), optimizing(level != OptimizationLevel::O0), thin_lto_prelink(prelink) {}

  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    Settings s = currentSettings();
    bool after_inlining;
    if (s.placement == "source")
      after_inlining = false;
    else if (s.placement == "after-inlining")
      after_inlining = true;
    else if (s.placement == "auto")
      after_inlining = optimizing;
    else {
      M.getContext().emitError(Twine("hookcc: -hookcc-placement=") + s.placement +
                               ": expected source, after-inlining or auto");
      return PreservedAnalyses::all();
    }
    // After inlining means after all of it: in a ThinLTO build (rustc's release builds do one
    // across a crate's codegen units) hooks put in before the link's inlining would change what
    // it inlines (a Rust release build defined 4.5 % more functions than without hookcc, 0
    // more with one codegen unit), and their records would keep functions alive that it drops.
    if (after_inlining && thin_lto_prelink && phase == PhaseOptimizerLast)
      return PreservedAnalyses::all();
    RawConfig config{s.entry_hook.c_str(), s.exit_hook.c_str(), s.entry_parm.c_str(),
                     s.exit_parm.c_str(), after_inlining ? 1u : 0u, s.default_off ? 1u : 0u,
                     s.skip_inline ? 1u : 0u, s.include.c_str(), s.exclude.c_str(),
                     s.min_size, s.exclude_crates.c_str(), s.outline.c_str()};
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
  PB.registerPipelineStartEPCallback([](ModulePassManager &MPM, OptimizationLevel Level) {
    MPM.addPass(HookccPass(PhaseStart, Level));
  });
  // Runs at every level, -O0 included (checked with clang-19), so after-inlining mode needs no
  // special case for -O0.
  // LLVM 20 added the LTO phase to this callback's signature.
#if LLVM_VERSION_MAJOR >= 20
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel Level, ThinOrFullLTOPhase LTOPhase) {
        MPM.addPass(HookccPass(PhaseOptimizerLast, Level,
                               LTOPhase == ThinOrFullLTOPhase::ThinLTOPreLink));
      });
#else
  PB.registerOptimizerLastEPCallback([](ModulePassManager &MPM, OptimizationLevel Level) {
    MPM.addPass(HookccPass(PhaseOptimizerLast, Level));
  });
#endif
  // For opt-19 -passes=hookcc (IR tests): runs whatever the options say, once.
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
        if (Name == "hookcc") {
          MPM.addPass(HookccPass(PhaseExplicit, OptimizationLevel::O0));
          return true;
        }
        if (Name.consume_front("hookcc-options<") && Name.consume_back(">"))
          return parseSettings(Name);
        return false;
      });
}

} // namespace

// Turns a call into an invoke that unwinds to `unwind`, splitting its block: the C API has no
// equivalent, and LLVM's helper keeps operand bundles, attributes and PHI nodes right.
extern "C" void hookcc_call_to_invoke(LLVMValueRef call, LLVMBasicBlockRef unwind) {
  changeToInvokeAndSplitBasicBlock(cast<CallInst>(unwrap(call)), unwrap(unwind));
}

// Turns an invoke into a call and a branch to its normal destination (for deleting a marker
// call of #[hookcc::no_hooks]); returns the call.
extern "C" LLVMValueRef hookcc_invoke_to_call(LLVMValueRef invoke) {
  return wrap(changeToCall(cast<InvokeInst>(unwrap(invoke))));
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

// Splits `inst`'s block before it, always (an empty head ending in a branch is fine), and returns
// the new block that starts with it: the place for a switch tested before a hook
// (instrument.rs, "Per-function switches").
extern "C" LLVMBasicBlockRef hookcc_split_before(LLVMValueRef inst) {
  Instruction *I = cast<Instruction>(unwrap(inst));
  return wrap(I->getParent()->splitBasicBlock(I, "hookcc.after"));
}

// Whether `fn` can be split by hookcc_outline_hooked: a clone called with `fn`'s arguments must
// do what `fn` does. Not for varargs (a plain call cannot pass them on), not where a block's
// address is taken (a computed goto's table, a global initializer, would send the clone into
// `fn`'s blocks), not with swifterror, inalloca or preallocated arguments (whose calls have
// rules of their own), and not for functions that escape their frame (llvm.localescape).
extern "C" int hookcc_can_outline(LLVMValueRef fn) {
  Function *F = cast<Function>(unwrap(fn));
  if (F->isVarArg() || F->isDeclaration())
    return 0;
  for (const Argument &A : F->args())
    if (A.hasSwiftErrorAttr() || A.hasInAllocaAttr() || A.hasPreallocatedAttr())
      return 0;
  for (const BasicBlock &BB : *F) {
    if (BB.hasAddressTaken())
      return 0;
    for (const Instruction &I : BB)
      if (const auto *II = dyn_cast<IntrinsicInst>(&I))
        if (II->getIntrinsicID() == Intrinsic::localescape)
          return 0;
  }
  return 1;
}

// The outlined hooked clone (instrument.rs, "outlines"): copies `fn` into an internal,
// never-inlined `NAME.hookcc` in `fn`'s section and comdat, with a debug-info subprogram of its
// own, and gives `fn` a new start, after its leading allocas: a volatile load of the byte at
// `on` (`cmpb $0, on(%rip)` on x86-64); when it is not 0, a tail call of the clone with `fn`'s
// arguments, whose result `fn` returns. Switched off, `fn` calls nothing, so it keeps the frame
// (none, for a leaf) it has without hookcc. Returns the clone, which the caller instruments.
extern "C" LLVMValueRef hookcc_outline_hooked(LLVMValueRef fn, LLVMValueRef on) {
  Function *F = cast<Function>(unwrap(fn));
  LLVMContext &Ctx = F->getContext();
  ValueToValueMapTy VMap;
  Function *Clone = CloneFunction(F, VMap);
  Clone->setName(F->getName() + ".hookcc");
  F->getParent()->getFunctionList().remove(Clone);
  F->getParent()->getFunctionList().insertAfter(F->getIterator(), Clone);
  Clone->setLinkage(GlobalValue::InternalLinkage);
  Clone->setVisibility(GlobalValue::DefaultVisibility);
  Clone->setDLLStorageClass(GlobalValue::DefaultStorageClass);
  Clone->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  Clone->setComdat(F->getComdat());
  Clone->removeFnAttr(Attribute::AlwaysInline);
  Clone->addFnAttr(Attribute::NoInline);
  // The clone calls the runtime, and `fn` reads the switch: what the optimizer found of
  // their memory (`memory(none)` for a pure function) is no longer true of either.
  for (Function *G : {F, Clone})
    G->removeFnAttr(Attribute::Memory);
  // Away from the plain bodies, which run while tracing is off: in `.text.unlikely`, which
  // the linkers put together, where the function is in no section of its own choosing (a
  // firmware's RAM functions keep theirs) and the target is one whose linker scripts know it.
  if (!F->hasSection() && Triple(F->getParent()->getTargetTriple()).isOSLinux())
    Clone->setSectionPrefix("unlikely");

  BasicBlock &Entry = F->getEntryBlock();
  BasicBlock::iterator First = Entry.begin();
  while (isa<AllocaInst>(*First))
    ++First;
  BasicBlock *Plain = Entry.splitBasicBlock(First, "hookcc.plain");
  Entry.getTerminator()->eraseFromParent();
  BasicBlock *Hooked = BasicBlock::Create(Ctx, "hookcc.hooked", F, Plain);
  IRBuilder<> B(&Entry);
  if (DISubprogram *SP = F->getSubprogram())
    B.SetCurrentDebugLocation(DILocation::get(Ctx, SP->getScopeLine(), 0, SP));
  Value *Byte = B.CreateLoad(Type::getInt8Ty(Ctx), unwrap(on), /*isVolatile=*/true, "hookcc.on");
  Value *IsOn = B.CreateICmpNE(Byte, B.getInt8(0), "hookcc.is_on");
  // Laid out as the unlikely side: tracing off falls through into the body.
  B.CreateCondBr(IsOn, Hooked, Plain, MDBuilder(Ctx).createUnlikelyBranchWeights());
  B.SetInsertPoint(Hooked);
  SmallVector<Value *, 8> Args;
  for (Argument &A : F->args())
    Args.push_back(&A);
  CallInst *Call = B.CreateCall(Clone, Args);
  Call->setCallingConv(F->getCallingConv());
  // The arguments' and the result's attributes (ABI: sret, byval, zeroext…), not the
  // function's own (optnone, for one, is no call's).
  AttributeList Attrs = F->getAttributes();
  SmallVector<AttributeSet, 8> ParamAttrs;
  for (unsigned I = 0; I < F->arg_size(); I++)
    ParamAttrs.push_back(Attrs.getParamAttrs(I));
  Call->setAttributes(AttributeList::get(Ctx, AttributeSet(), Attrs.getRetAttrs(), ParamAttrs));
  Call->setTailCallKind(CallInst::TCK_Tail);
  if (F->getReturnType()->isVoidTy())
    B.CreateRetVoid();
  else
    B.CreateRet(Call);
  return wrap(Clone);
}

// Appends `fn` to the module's llvm.global_ctors (the C API has no helper for it).
extern "C" void hookcc_append_ctor(LLVMModuleRef module, LLVMValueRef fn, int priority) {
  appendToGlobalCtors(*unwrap(module), cast<Function>(unwrap(fn)), priority);
}

extern "C" PassPluginLibraryInfo hookcc_plugin_info() {
  return {LLVM_PLUGIN_API_VERSION, "hookcc", "0.1.0", registerCallbacks};
}
