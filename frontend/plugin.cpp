// hookcc's clang-19 frontend plugin: pragmas and attributes become marks the pass reads.
//
// Each function definition may get `annotate("hookcc:off")`, `annotate("hookcc:on")` or
// `annotate("hookcc:inline")`. The pass plugin reads them from llvm.global.annotations, turns
// them into function attributes and removes the annotations, so they cost nothing in the output.
//
// The rules (docs/dialects.md):
// - `#pragma NO_HOOKS(f)` (TI) before f's definition, or `no_instrument_function`: off. TI's C++
//   form, `#pragma NO_HOOKS` (or `NO_HOOKS;`), applies to the next function declared.
// - `#pragma profile on|off|reset` (Metrowerks): the state in force at the function's closing
//   brace decides; `reset` returns to the command line's setting (no mark).
// - a function declared inline gets `hookcc:inline` (TI puts no hooks in inline functions).
// - an `always_inline` function, or one of the compiler's own headers (intrinsics): off,
//   unless hookcc passes -fplugin-arg-hookcc-hook-intrinsics (`--hook-intrinsics`).
// - GCC's -finstrument-functions-exclude-function-list= / -exclude-file-list= (hookcc passes
//   each item as -fplugin-arg-hookcc-exclude-function=S / exclude-file=S): off for a function
//   whose user-visible name (`int ns::f(int)`) contains S, or that is defined in a file whose
//   path contains S.
//
// And TI's placement pragmas, which the seed's own hook.c uses, become section attributes:
// `#pragma CODE_SECTION(f, "sec")` / `#pragma DATA_SECTION(v, "sec")` (C), and the C++ forms
// `#pragma CODE_SECTION("sec")` / `#pragma DATA_SECTION("sec")` for the next function / variable.

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "clang/Lex/LiteralSupport.h"
#include "clang/Lex/Preprocessor.h"

#include <memory>
#include <string>
#include <vector>

using namespace clang;

namespace {

enum class ProfileState { On, Off, Reset };

struct ProfilePragma {
  SourceLocation loc;
  ProfileState state;
};

// A pragma that names a symbol (TI's C forms) or, with `name` empty, applies to the next
// declaration of its kind (TI's C++ forms).
struct SymbolPragma {
  std::string name;
  SourceLocation loc;
  std::string section; // CODE_SECTION / DATA_SECTION only
  bool applied = false; // to a definition
  SourceLocation ineffective_definition; // a definition of `name` before the pragma
  bool declared = false;
  const Decl *bound = nullptr; // the C++ forms: the (canonical) declaration that followed
};

// Pragma handlers and the AST consumer are created separately by clang; they share this.
// One translation unit is compiled at a time per process; the consumer resets it.
struct PluginState {
  std::vector<ProfilePragma> profile;
  std::vector<SymbolPragma> no_hooks;
  std::vector<SymbolPragma> code_section;
  std::vector<SymbolPragma> data_section;
};

PluginState &state() {
  static PluginState s;
  return s;
}

// The plugin's arguments: given once per compiler run, before any translation unit.
struct Exclusions {
  std::vector<std::string> functions;
  std::vector<std::string> files;
  // `hook-intrinsics`: always_inline functions and the compiler's own headers keep their hooks.
  bool hook_intrinsics = false;
};

Exclusions &exclusions() {
  static Exclusions e;
  return e;
}

bool containsAny(StringRef text, const std::vector<std::string> &parts) {
  for (const std::string &part : parts)
    if (text.contains(part))
      return true;
  return false;
}

// A function's user-visible name as GCC matches its exclusion list against: return type,
// qualified name and parameter types, as in `vector<int> blah(const vector<int> &)`.
std::string userVisibleName(const FunctionDecl *FD) {
  PrintingPolicy policy(FD->getASTContext().getLangOpts());
  std::string text = FD->getReturnType().getAsString(policy) + " " +
                     FD->getQualifiedNameAsString() + "(";
  for (unsigned i = 0; i < FD->getNumParams(); i++) {
    if (i > 0)
      text += ", ";
    text += FD->getParamDecl(i)->getType().getAsString(policy);
  }
  return text + ")";
}

void warn(Preprocessor &PP, SourceLocation loc, StringRef message) {
  DiagnosticsEngine &D = PP.getDiagnostics();
  D.Report(loc, D.getCustomDiagID(DiagnosticsEngine::Warning, "%0")) << message;
}

void skipToEndOfDirective(Preprocessor &PP, Token &tok) {
  while (tok.isNot(tok::eod) && tok.isNot(tok::eof))
    PP.Lex(tok);
}

// Reads the rest of a pragma line after its closing ')' (or after its name, in the C++ forms):
// an optional ';', then the end. False if anything else follows.
bool endOfPragma(Preprocessor &PP, Token &tok) {
  if (tok.is(tok::semi))
    PP.Lex(tok);
  return tok.is(tok::eod);
}

// In a job that writes preprocessed output (-E, and the first job of -save-temps) a pragma is
// not ours to take: clang's printer must write it into the output, or the compilation made from
// that file (the next job of -save-temps) never sees it, and the functions it names get hooks
// (they did). So the handler steps aside for the rest of this job (clang's catch-all handler
// prints what no handler takes) and gives this pragma back as `_Pragma("…")`, which the catch-all
// prints as `#pragma …`. True if it did.
bool handBackWhenPreprocessing(Preprocessor &PP, PragmaHandler *self, const Token &name) {
  if (!PP.isPreprocessedOutput())
    return false;
  std::string text = self->getName().str();
  Token tok;
  PP.Lex(tok);
  while (tok.isNot(tok::eod) && tok.isNot(tok::eof)) {
    if (tok.hasLeadingSpace())
      text += ' ';
    text += PP.getSpelling(tok);
    PP.Lex(tok);
  }
  // Ownership comes back to us: the handler lives on, unused, until the process ends.
  PP.RemovePragmaHandler(self);
  std::string literal = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      literal += '\\';
    literal += c;
  }
  literal += '"';
  SourceLocation at = name.getLocation();
  auto tokens = std::make_unique<Token[]>(4);
  for (unsigned i = 0; i < 4; ++i) {
    tokens[i].startToken();
    tokens[i].setLocation(at);
  }
  tokens[0].setKind(tok::identifier);
  tokens[0].setIdentifierInfo(PP.getIdentifierInfo("_Pragma"));
  tokens[1].setKind(tok::l_paren);
  tokens[2].setKind(tok::string_literal);
  PP.CreateString(literal, tokens[2], at, at);
  tokens[3].setKind(tok::r_paren);
  PP.EnterTokenStream(std::move(tokens), 4, /*DisableMacroExpansion=*/false,
                      /*IsReinject=*/false);
  return true;
}

// #pragma NO_HOOKS(func)   — also through _Pragma and from headers; a trailing ';' is allowed.
// #pragma NO_HOOKS         — TI's C++ form (also `NO_HOOKS;`): the next function declared.
class NoHooksHandler : public PragmaHandler {
public:
  NoHooksHandler() : PragmaHandler("NO_HOOKS") {}

  void HandlePragma(Preprocessor &PP, PragmaIntroducer, Token &first) override {
    if (handBackWhenPreprocessing(PP, this, first))
      return;
    SourceLocation at = first.getLocation();
    Token tok;
    auto malformed = [&](const char *what) {
      warn(PP, tok.getLocation(),
           std::string("malformed '#pragma NO_HOOKS': ") + what +
               "; expected '#pragma NO_HOOKS(function)', or '#pragma NO_HOOKS' before a "
               "function, pragma ignored");
      skipToEndOfDirective(PP, tok);
    };
    PP.Lex(tok);
    if (tok.is(tok::eod) || tok.is(tok::semi)) {
      if (!endOfPragma(PP, tok))
        return malformed("extra tokens after ';'");
      state().no_hooks.push_back({"", at});
      return;
    }
    if (tok.isNot(tok::l_paren))
      return malformed("missing '('");
    PP.Lex(tok);
    if (tok.isNot(tok::identifier))
      return malformed("expected a function name");
    std::string name = tok.getIdentifierInfo()->getName().str();
    PP.Lex(tok);
    if (tok.isNot(tok::r_paren))
      return malformed("missing ')'");
    PP.Lex(tok);
    if (!endOfPragma(PP, tok))
      return malformed("extra tokens after ')'");
    state().no_hooks.push_back({name, at});
  }
};

// #pragma CODE_SECTION(func, "section") and #pragma DATA_SECTION(var, "section") (TI, C);
// #pragma CODE_SECTION("section") and #pragma DATA_SECTION("section") (TI, C++): the next
// function or variable declared.
class SectionHandler : public PragmaHandler {
  bool code;

public:
  explicit SectionHandler(bool code)
      : PragmaHandler(code ? "CODE_SECTION" : "DATA_SECTION"), code(code) {}

  void HandlePragma(Preprocessor &PP, PragmaIntroducer, Token &first) override {
    if (handBackWhenPreprocessing(PP, this, first))
      return;
    SourceLocation at = first.getLocation();
    const char *kind = code ? "CODE_SECTION" : "DATA_SECTION";
    const char *what = code ? "function" : "variable";
    Token tok;
    auto malformed = [&](const std::string &problem) {
      warn(PP, tok.getLocation(),
           "malformed '#pragma " + std::string(kind) + "': " + problem + "; expected '#pragma " +
               kind + "(" + what + ", \"section\")', or '#pragma " + kind +
               "(\"section\")' before a " + what + ", pragma ignored");
      skipToEndOfDirective(PP, tok);
    };
    PP.Lex(tok);
    if (tok.isNot(tok::l_paren))
      return malformed("missing '('");
    PP.Lex(tok);
    std::string name;
    if (tok.is(tok::identifier)) {
      name = tok.getIdentifierInfo()->getName().str();
      PP.Lex(tok);
      if (tok.isNot(tok::comma))
        return malformed("missing ',' after the " + std::string(what) + " name");
      PP.Lex(tok);
    }
    if (tok.isNot(tok::string_literal))
      return malformed("expected a section name in quotes");
    StringLiteralParser literal(ArrayRef<Token>(tok), PP);
    if (literal.hadError)
      return malformed("bad section name");
    std::string section = literal.GetString().str();
    if (section.empty())
      return malformed("empty section name");
    PP.Lex(tok);
    if (tok.isNot(tok::r_paren))
      return malformed("missing ')'");
    PP.Lex(tok);
    if (!endOfPragma(PP, tok))
      return malformed("extra tokens after ')'");
    SymbolPragma p{name, at};
    p.section = section;
    (code ? state().code_section : state().data_section).push_back(p);
  }
};

class CodeSectionHandler : public SectionHandler {
public:
  CodeSectionHandler() : SectionHandler(true) {}
};

class DataSectionHandler : public SectionHandler {
public:
  DataSectionHandler() : SectionHandler(false) {}
};

// #pragma profile on | off | reset
class ProfileHandler : public PragmaHandler {
public:
  ProfileHandler() : PragmaHandler("profile") {}

  void HandlePragma(Preprocessor &PP, PragmaIntroducer, Token &first) override {
    if (handBackWhenPreprocessing(PP, this, first))
      return;
    SourceLocation at = first.getLocation();
    Token tok;
    PP.Lex(tok);
    ProfileState s;
    StringRef word = tok.is(tok::identifier) ? tok.getIdentifierInfo()->getName() : "";
    if (word == "on")
      s = ProfileState::On;
    else if (word == "off")
      s = ProfileState::Off;
    else if (word == "reset")
      s = ProfileState::Reset;
    else {
      warn(PP, tok.getLocation(),
           "malformed '#pragma profile': expected 'on', 'off' or 'reset', pragma ignored");
      skipToEndOfDirective(PP, tok);
      return;
    }
    PP.Lex(tok);
    if (tok.isNot(tok::eod)) {
      warn(PP, tok.getLocation(), "extra tokens at end of '#pragma profile', ignored");
      skipToEndOfDirective(PP, tok);
    }
    state().profile.push_back({at, s});
  }
};

class MarkingConsumer : public ASTConsumer {
  CompilerInstance &CI;

public:
  explicit MarkingConsumer(CompilerInstance &CI) : CI(CI) {}

  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl *D : group)
      visit(D);
    return true;
  }

  // Inline member functions reach code generation through here, before their class does.
  void HandleInlineFunctionDefinition(FunctionDecl *FD) override { mark(FD); }

  void HandleTranslationUnit(ASTContext &) override {
    reportUnused(state().no_hooks, "NO_HOOKS", "function");
    reportUnused(state().code_section, "CODE_SECTION", "function");
    reportUnused(state().data_section, "DATA_SECTION", "variable");
  }

private:
  void reportUnused(const std::vector<SymbolPragma> &pragmas, const char *kind,
                    const char *what) {
    DiagnosticsEngine &D = CI.getDiagnostics();
    for (const SymbolPragma &p : pragmas) {
      if (p.applied || p.bound) // a C++ form bound to a declaration defined elsewhere is fine
        continue;
      if (p.name.empty()) {
        D.Report(p.loc, D.getCustomDiagID(DiagnosticsEngine::Warning,
                                          "'#pragma %0' is not followed by a %1 declaration "
                                          "and has no effect"))
            << kind << what;
      } else if (p.ineffective_definition.isValid()) {
        D.Report(p.loc, D.getCustomDiagID(DiagnosticsEngine::Warning,
                                          "'#pragma %0(%1)' comes after the definition of "
                                          "'%1' and has no effect; place it before"))
            << kind << p.name;
        D.Report(p.ineffective_definition,
                 D.getCustomDiagID(DiagnosticsEngine::Note, "'%0' is defined here"))
            << p.name;
      } else if (!p.declared) {
        D.Report(p.loc, D.getCustomDiagID(DiagnosticsEngine::Warning,
                                          "'#pragma %0(%1)': no %2 named '%1' in this "
                                          "translation unit"))
            << kind << p.name << what;
      }
    }
  }

  // Which of `pragmas` apply to the declaration D (named `name`, a definition or not, ending at
  // `end`): those naming it that come before `end` (C forms), and a nameless one whose next
  // declaration was D or an earlier declaration of the same entity (C++ forms).
  std::vector<const SymbolPragma *> applying(std::vector<SymbolPragma> &pragmas, NamedDecl *D,
                                             bool definition, SourceLocation end) {
    SourceManager &SM = CI.getSourceManager();
    const Decl *canonical = D->getCanonicalDecl();
    IdentifierInfo *id = D->getIdentifier();
    std::vector<const SymbolPragma *> found;
    for (SymbolPragma &p : pragmas) {
      if (p.name.empty()) {
        if (!p.bound && SM.isBeforeInTranslationUnit(p.loc, D->getBeginLoc()))
          p.bound = canonical;
        if (p.bound != canonical)
          continue;
      } else {
        if (!id || p.name != id->getName())
          continue;
        p.declared = true;
        if (!SM.isBeforeInTranslationUnit(p.loc, end)) {
          if (definition && !p.ineffective_definition.isValid())
            p.ineffective_definition = D->getLocation();
          continue;
        }
      }
      p.applied |= definition;
      found.push_back(&p);
    }
    return found;
  }

  void setSection(Decl *D, const std::vector<const SymbolPragma *> &pragmas) {
    for (const SymbolPragma *p : pragmas) // the last one in force wins, as for a redeclaration
      D->addAttr(SectionAttr::CreateImplicit(CI.getASTContext(), p->section, D->getSourceRange()));
  }

  void visit(Decl *D) {
    if (auto *FD = dyn_cast<FunctionDecl>(D))
      mark(FD);
    else if (auto *FT = dyn_cast<FunctionTemplateDecl>(D))
      mark(FT->getTemplatedDecl());
    else if (auto *VD = dyn_cast<VarDecl>(D)) {
      if (VD->hasGlobalStorage())
        setSection(VD, applying(state().data_section, VD,
                                VD->isThisDeclarationADefinition() != VarDecl::DeclarationOnly,
                                VD->getEndLoc()));
    }
    if (auto *DC = dyn_cast<DeclContext>(D)) {
      if (isa<FunctionDecl>(DC))
        return; // local classes are visited through their own definitions
      for (Decl *sub : DC->decls())
        visit(sub);
    }
  }

  static bool hasMark(FunctionDecl *FD, StringRef mark) {
    for (auto *A : FD->specific_attrs<AnnotateAttr>())
      if (A->getAnnotation() == mark)
        return true;
    return false;
  }

  void addMark(FunctionDecl *FD, StringRef mark) {
    if (!hasMark(FD, mark))
      FD->addAttr(AnnotateAttr::CreateImplicit(CI.getASTContext(), mark, nullptr, 0,
                                               FD->getSourceRange()));
  }

  // An `always_inline` function, or one defined in the compiler's own headers (clang's
  // resource directory: the intrinsics of <immintrin.h>, <arm_neon.h>, …), gets no hooks unless
  // `hook-intrinsics` is given: hooks in `_mm256_add_epi32` cost more than the instruction it
  // stands for, and gave 35 % of zlib-ng's exclusive time to intrinsics (issue 26).
  bool isIntrinsic(FunctionDecl *FD) {
    if (FD->hasAttr<AlwaysInlineAttr>())
      return true;
    const std::string &resources = CI.getHeaderSearchOpts().ResourceDir;
    if (resources.empty())
      return false;
    SourceManager &SM = CI.getSourceManager();
    PresumedLoc where = SM.getPresumedLoc(SM.getExpansionLoc(FD->getLocation()));
    return where.isValid() && StringRef(where.getFilename()).starts_with(resources + "/");
  }

  void mark(FunctionDecl *FD) {
    SourceManager &SM = CI.getSourceManager();
    const bool definition = FD->doesThisDeclarationHaveABody();
    SourceLocation end = definition ? FD->getBodyRBrace() : FD->getEndLoc();
    setSection(FD, applying(state().code_section, FD, definition, end));
    bool off = FD->hasAttr<NoInstrumentFunctionAttr>() ||
               !applying(state().no_hooks, FD, definition, end).empty();
    if (!definition)
      return;
    const Exclusions &ex = exclusions();
    if (!ex.functions.empty() && containsAny(userVisibleName(FD), ex.functions))
      off = true;
    if (!ex.hook_intrinsics && isIntrinsic(FD))
      off = true;
    if (!ex.files.empty()) {
      PresumedLoc where = SM.getPresumedLoc(SM.getExpansionLoc(FD->getLocation()));
      if (where.isValid() && containsAny(where.getFilename(), ex.files))
        off = true;
    }
    // Metrowerks: the state in force at the closing brace decides.
    ProfileState profile = ProfileState::Reset;
    for (const ProfilePragma &p : state().profile) {
      if (!SM.isBeforeInTranslationUnit(p.loc, end))
        break;
      profile = p.state;
    }
    if (off || profile == ProfileState::Off)
      addMark(FD, "hookcc:off");
    else if (profile == ProfileState::On)
      addMark(FD, "hookcc:on");
    if (FD->isInlined())
      addMark(FD, "hookcc:inline");
  }
};

class MarkingAction : public PluginASTAction {
protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef) override {
    state() = PluginState();
    return std::make_unique<MarkingConsumer>(CI);
  }

  bool ParseArgs(const CompilerInstance &CI, const std::vector<std::string> &args) override {
    Exclusions &ex = exclusions();
    for (const std::string &arg : args) {
      StringRef a(arg);
      if (a.consume_front("exclude-function="))
        ex.functions.push_back(a.str());
      else if (a.consume_front("exclude-file="))
        ex.files.push_back(a.str());
      else if (a == "hook-intrinsics")
        ex.hook_intrinsics = true;
      else {
        DiagnosticsEngine &D = CI.getDiagnostics();
        D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                                   "hookcc plugin: unknown argument '%0'"))
            << arg;
        return false;
      }
    }
    return true;
  }

  // Before code generation, so the marks exist when functions are emitted.
  ActionType getActionType() override { return AddBeforeMainAction; }
};

} // namespace

static FrontendPluginRegistry::Add<MarkingAction> RegisterAction("hookcc",
                                                                 "hookcc pragmas and marks");
static PragmaHandlerRegistry::Add<NoHooksHandler> RegisterNoHooks("NO_HOOKS",
                                                                  "TI #pragma NO_HOOKS(func)");
static PragmaHandlerRegistry::Add<ProfileHandler> RegisterProfile("profile",
                                                                  "#pragma profile on|off|reset");
static PragmaHandlerRegistry::Add<CodeSectionHandler>
    RegisterCodeSection("CODE_SECTION", "TI #pragma CODE_SECTION(func, \"section\")");
static PragmaHandlerRegistry::Add<DataSectionHandler>
    RegisterDataSection("DATA_SECTION", "TI #pragma DATA_SECTION(var, \"section\")");
