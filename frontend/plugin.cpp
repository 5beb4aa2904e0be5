// hookcc's clang-19 frontend plugin: pragmas and attributes become marks the pass reads.
//
// Each function definition may get `annotate("hookcc:off")`, `annotate("hookcc:on")` or
// `annotate("hookcc:inline")`. The pass plugin reads them from llvm.global.annotations, turns
// them into function attributes and removes the annotations, so they cost nothing in the output.
//
// The rules (docs/dialects.md):
// - `#pragma NO_HOOKS(f)` (TI) before f's definition, or `no_instrument_function`: off.
// - `#pragma profile on|off|reset` (Metrowerks): the state in force at the function's closing
//   brace decides; `reset` returns to the command line's setting (no mark).
// - a function declared inline gets `hookcc:inline` (TI puts no hooks in inline functions).

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
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

struct NoHooksPragma {
  std::string name;
  SourceLocation loc;
  bool applied = false;
  SourceLocation ineffective_definition; // a definition of `name` before the pragma
  bool declared = false;
};

// Pragma handlers and the AST consumer are created separately by clang; they share this.
// One translation unit is compiled at a time per process; the consumer resets it.
struct PluginState {
  std::vector<ProfilePragma> profile;
  std::vector<NoHooksPragma> no_hooks;
};

PluginState &state() {
  static PluginState s;
  return s;
}

void warn(Preprocessor &PP, SourceLocation loc, StringRef message) {
  DiagnosticsEngine &D = PP.getDiagnostics();
  D.Report(loc, D.getCustomDiagID(DiagnosticsEngine::Warning, "%0")) << message;
}

void skipToEndOfDirective(Preprocessor &PP, Token &tok) {
  while (tok.isNot(tok::eod) && tok.isNot(tok::eof))
    PP.Lex(tok);
}

// #pragma NO_HOOKS(func)   — also through _Pragma and from headers; a trailing ';' is allowed.
class NoHooksHandler : public PragmaHandler {
public:
  NoHooksHandler() : PragmaHandler("NO_HOOKS") {}

  void HandlePragma(Preprocessor &PP, PragmaIntroducer, Token &first) override {
    SourceLocation at = first.getLocation();
    Token tok;
    auto malformed = [&](const char *what) {
      warn(PP, tok.getLocation(),
           std::string("malformed '#pragma NO_HOOKS': ") + what +
               "; expected '#pragma NO_HOOKS(function)', pragma ignored");
      skipToEndOfDirective(PP, tok);
    };
    PP.Lex(tok);
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
    if (tok.is(tok::semi))
      PP.Lex(tok);
    if (tok.isNot(tok::eod))
      return malformed("extra tokens after ')'");
    state().no_hooks.push_back({name, at});
  }
};

// #pragma profile on | off | reset
class ProfileHandler : public PragmaHandler {
public:
  ProfileHandler() : PragmaHandler("profile") {}

  void HandlePragma(Preprocessor &PP, PragmaIntroducer, Token &first) override {
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
    DiagnosticsEngine &D = CI.getDiagnostics();
    for (const NoHooksPragma &p : state().no_hooks) {
      if (p.applied)
        continue;
      if (p.ineffective_definition.isValid()) {
        D.Report(p.loc, D.getCustomDiagID(DiagnosticsEngine::Warning,
                                          "'#pragma NO_HOOKS(%0)' comes after the definition of "
                                          "'%0' and has no effect; place it before"))
            << p.name;
        D.Report(p.ineffective_definition,
                 D.getCustomDiagID(DiagnosticsEngine::Note, "'%0' is defined here"))
            << p.name;
      } else if (!p.declared) {
        D.Report(p.loc, D.getCustomDiagID(DiagnosticsEngine::Warning,
                                          "'#pragma NO_HOOKS(%0)': no function named '%0' in "
                                          "this translation unit"))
            << p.name;
      }
    }
  }

private:
  void visit(Decl *D) {
    if (auto *FD = dyn_cast<FunctionDecl>(D))
      mark(FD);
    else if (auto *FT = dyn_cast<FunctionTemplateDecl>(D))
      mark(FT->getTemplatedDecl());
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

  void mark(FunctionDecl *FD) {
    SourceManager &SM = CI.getSourceManager();
    const bool definition = FD->doesThisDeclarationHaveABody();
    IdentifierInfo *id = FD->getIdentifier();
    SourceLocation end = definition ? FD->getBodyRBrace() : FD->getEndLoc();
    bool off = FD->hasAttr<NoInstrumentFunctionAttr>();
    if (id) {
      for (NoHooksPragma &p : state().no_hooks) {
        if (p.name != id->getName())
          continue;
        p.declared = true;
        if (!definition)
          continue;
        if (SM.isBeforeInTranslationUnit(p.loc, end)) {
          p.applied = true;
          off = true;
        } else if (!p.ineffective_definition.isValid()) {
          p.ineffective_definition = FD->getLocation();
        }
      }
    }
    if (!definition)
      return;
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

  bool ParseArgs(const CompilerInstance &, const std::vector<std::string> &) override {
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
